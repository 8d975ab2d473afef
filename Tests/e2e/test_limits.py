"""Limits against abuse, each shown: sizes, depth, lengths, transactions per
receipt, the per-client request rate, and the calls to Apple at once."""
import http.client
import json
import os
from concurrent.futures import ThreadPoolExecutor

from support import PAY_6, assert_error, new_transaction_id, new_user_id

MAX_RECEIPT_CHARACTERS = 1_400_000
MAX_TRANSACTIONS = 1000


def test_receipt_over_its_limit_is_an_invalid_field(api, db):
    before = db.receipt_count()
    response = api.verify("A" * (MAX_RECEIPT_CHARACTERS + 4), user_id=new_user_id())
    assert_error(response, 400, "invalid_field")
    assert "receipt_data" in response.json()["error"]["message"]
    assert db.receipt_count() == before


def test_json_nested_deeper_than_32_is_invalid_json(api):
    deep = "[" * 40 + "]" * 40
    body = '{"user_id":"u","product_id":"p","x":' + deep + "}"
    assert_error(api.post_raw("/v1/orders", body.encode()), 400, "invalid_json")


def test_field_lengths_of_the_verify_route(api, receipts):
    receipt = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
    assert_error(api.verify(receipt, user_id=new_user_id(), transaction_id="1" * 65), 400, "invalid_field")
    assert_error(api.verify(receipt, user_id=new_user_id(), app_version="1" * 33), 400, "invalid_field")
    assert_error(api.verify(receipt, user_id="u" * 65), 400, "invalid_field")


def test_at_most_1000_transactions_are_handled_per_request_named_first(api, db, receipts):
    user_id = new_user_id()
    bought = [receipts.purchase(PAY_6, transaction_id=new_transaction_id()) for _ in range(MAX_TRANSACTIONS + 1)]
    named = bought[-1]["transaction_id"]
    response = api.verify(receipts.app_receipt(bought), user_id=user_id, transaction_id=named)
    assert response.status_code == 200, response.text[:300]
    listed = response.json()["transactions"]
    assert len(listed) == MAX_TRANSACTIONS
    assert listed[0]["transaction_id"] == named and listed[0]["state"] == "delivered"
    assert db.scalar("SELECT COUNT(*) FROM transactions WHERE user_id = %s", user_id) == MAX_TRANSACTIONS


def get_from(source_address, port, path):
    connection = http.client.HTTPConnection("127.0.0.1", port, source_address=(source_address, 0), timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.getheader("Retry-After"), response.read()
    finally:
        connection.close()


def test_one_client_over_the_request_rate_gets_a_json_429():
    port = int(os.environ["IAP_HTTP_PORT"])
    answers = [get_from("127.0.0.2", port, "/v1/version") for _ in range(250)]
    limited = [a for a in answers if a[0] == 429]
    assert limited, "250 requests at once from one address were never limited"
    assert json.loads(limited[0][2])["error"]["code"] == "rate_limited"
    assert limited[0][1] is not None, "a 429 without Retry-After"
    assert sum(1 for a in answers if a[0] == 200) >= 100, "the burst allowance was not honoured"
    # Loopback (health checks, the host itself) is exempt.
    assert all(get_from("127.0.0.1", port, "/v1/version")[0] == 200 for _ in range(250))


def test_calls_to_apple_at_once_are_bounded(api, db, receipts, simulator):
    """The test stack runs with IAP_APPLE_MAX_CALLS=8; more requests wait their turn."""
    bound = int(os.environ.get("IAP_APPLE_MAX_CALLS", "8"))
    simulator.control(latency_ms=400)
    user_id = new_user_id()
    made = [receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
            for _ in range(bound * 3)]
    with ThreadPoolExecutor(bound * 3) as pool:
        answers = list(pool.map(lambda r: api.verify(r, user_id=user_id), made))
    assert [a.json()["status"] for a in answers] == ["delivered"] * len(made)
    assert simulator.stats()["max_inflight"] <= bound, simulator.stats()


def test_a_delivered_receipt_sent_again_is_answered_without_apple(api, receipts, simulator):
    user_id = new_user_id()
    receipt = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
    assert api.verify(receipt, user_id=user_id).json()["status"] == "delivered"
    simulator.reset_stats()
    for _ in range(5):
        assert api.verify(receipt, user_id=user_id).json()["status"] == "already_delivered"
    assert simulator.stats()["production"]["requests"] == 0
