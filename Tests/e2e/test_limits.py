"""Limits against abuse, each shown at its edge: receipt size, JSON nesting depth,
field lengths, transactions per receipt, the per-client request rate, the calls
to Apple at once, and the replay short-cut. (The 2 MiB body limit is in
test_routes.py.)"""
import http.client
import json
import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from invariants import receipt_sha256
from support import (PAY_6, RUN_RECORD, assert_error, assert_verify_answer, new_transaction_id, new_user_id)

MAX_RECEIPT_CHARACTERS = 1_400_000
MAX_JSON_DEPTH = 32          # a top-level object is depth 1
MAX_TRANSACTIONS = 1000
RATE_LIMIT_BURST = 100       # nginx/iap-fcgi-limits.conf: 50 r/s, burst 100, per client address
RATE_PER_SECOND = 50
RATE_LIMIT_CONNECTIONS = 8   # one address asking at once on this many connections outruns 50 r/s
RATE_LIMIT_DEADLINE_SECONDS = 120


def one_purchase_receipt(receipts):
    bought = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    return receipts.app_receipt([bought]), bought["transaction_id"]


# --- sizes and depth ------------------------------------------------------------------------------

def test_receipt_over_its_limit_is_an_invalid_field(api, db):
    before = db.receipt_count()
    response = api.verify("A" * (MAX_RECEIPT_CHARACTERS + 4), user_id=new_user_id())
    assert_error(response, 400, "invalid_field")
    assert "receipt_data" in response.json()["error"]["message"]
    assert db.receipt_count() == before, "a refused receipt was recorded"


def test_receipt_at_its_limit_passes_the_input_checks(api, db, simulator):
    """1,400,000 characters of valid base64 are taken, recorded and sent to Apple, which cannot authenticate
    them (21003: final at the first call; the 21002 of such data would be asked three times, 1 MiB each, within
    the budget, a verdict the machine's speed could change)."""
    simulator.control(force_status=21003)
    data = "A" * MAX_RECEIPT_CHARACTERS
    assert_verify_answer(api.verify(data, user_id=new_user_id()), "not_paid")
    assert simulator.requests_to("production") == 1
    assert db.receipts_with_sha256(receipt_sha256(data)), "the receipt at the limit has no audit row"


def nested(depth):
    """A JSON value that brings `depth` levels of arrays under the top-level object."""
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("route", ["/v1/orders", "/v1/receipts/verify"])
def test_json_nested_deeper_than_32_is_invalid_json(api, db, receipts, route):
    receipt, _ = one_purchase_receipt(receipts)
    fields = ('"user_id":"u-deep","product_id":"zydj.product.pay_6"' if route == "/v1/orders"
              else f'"user_id":"u-deep","receipt_data":"{receipt}"')
    before = db.receipt_count()
    too_deep = "{" + fields + ',"x":' + nested(MAX_JSON_DEPTH) + "}"     # depth 33
    assert_error(api.post_raw(route, too_deep.encode()), 400, "invalid_json")
    assert db.receipt_count() == before

    at_the_limit = "{" + fields + ',"x":' + nested(MAX_JSON_DEPTH - 1) + "}"   # depth 32: unknown key, ignored
    response = api.post_raw(route, at_the_limit.encode())
    assert response.status_code == (201 if route == "/v1/orders" else 200), response.text[:300]


def test_deep_nesting_inside_a_field_is_invalid_json_too(api):
    """Depth is counted anywhere in the body, not only at the top: 100,000 brackets are no stack overflow."""
    body = '{"user_id":"u","product_id":' + nested(100_000) + "}"
    assert_error(api.post_raw("/v1/orders", body.encode()), 400, "invalid_json")
    assert api.get("/v1/health").status_code == 200


# --- field lengths on the receipt path -------------------------------------------------------------

@pytest.mark.parametrize("field, too_long", [
    ("transaction_id", "1" * 65),
    ("app_version", "1" * 33),
    ("user_id", "u" * 65),
], ids=["transaction_id 65 digits", "app_version 33 characters", "user_id 65 characters"])
def test_verify_field_over_its_length_is_an_invalid_field(api, db, receipts, field, too_long):
    receipt, _ = one_purchase_receipt(receipts)
    fields = {"user_id": new_user_id(), field: too_long}
    before = db.receipt_count()
    response = api.verify(receipt, **fields)
    assert_error(response, 400, "invalid_field")
    assert field in response.json()["error"]["message"]
    assert db.receipt_count() == before, "a refused request was recorded"


def test_verify_fields_at_their_lengths_are_taken(api, receipts):
    """64 digits and 32 characters pass; a named transaction the receipt does not hold is `pending`."""
    receipt, _ = one_purchase_receipt(receipts)
    response = api.verify(receipt, user_id="u" * 64, transaction_id="9" * 64, app_version="1" * 32)
    assert_verify_answer(response, "pending")


def test_order_product_id_over_128_characters_is_an_invalid_field(api, db):
    before = db.scalar("SELECT COUNT(*) FROM orders")
    assert_error(api.post_json("/v1/orders", {"user_id": new_user_id(), "product_id": "p" * 129}),
                 400, "invalid_field")
    # 128 passes the length check and meets the catalog.
    assert_error(api.post_json("/v1/orders", {"user_id": new_user_id(), "product_id": "p" * 128}),
                 404, "unknown_product")
    assert db.scalar("SELECT COUNT(*) FROM orders") == before


# --- transactions per receipt ----------------------------------------------------------------------

def test_at_most_1000_transactions_are_handled_per_request_named_first(api, db, receipts):
    user_id = new_user_id()
    bought = [receipts.purchase(PAY_6, transaction_id=new_transaction_id()) for _ in range(MAX_TRANSACTIONS + 1)]
    named = bought[-1]["transaction_id"]
    receipt = receipts.app_receipt(bought)
    assert len(receipts.decode(receipt)["in_app"]) == MAX_TRANSACTIONS + 1, "the simulator's receipt is short"

    response = api.verify(receipt, user_id=user_id, transaction_id=named)

    body = assert_verify_answer(response, "delivered")
    listed = body["transactions"]
    assert len(listed) == MAX_TRANSACTIONS
    assert listed[0]["transaction_id"] == named and listed[0]["state"] == "delivered"
    assert db.scalar("SELECT COUNT(*) FROM transactions WHERE user_id = %s", user_id) == MAX_TRANSACTIONS
    assert db.transaction(named)["state"] == "delivered"


# --- the request rate per client -------------------------------------------------------------------

def get_from(source_address, path):
    """GET through nginx from `source_address` (any 127/8 address is this host)."""
    connection = connect_from(source_address)
    try:
        return get_on(connection, path)
    finally:
        connection.close()


def connect_from(source_address):
    return http.client.HTTPConnection("127.0.0.1", int(os.environ["IAP_HTTP_PORT"]),
                                      source_address=(source_address, 0), timeout=10)


def get_on(connection, path):
    """GET on a kept-alive connection: (status, Content-Type, Retry-After, body)."""
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read().decode(errors="replace")
    RUN_RECORD.answered("GET", path, response.status, body)
    return response.status, response.getheader("Content-Type"), response.getheader("Retry-After"), body


def unused_client_address():
    """An address of 127/8 no earlier run has used lately: its rate limit starts with the whole burst."""
    return "127.{}.{}.{}".format(random.randint(2, 254), random.randint(0, 255), random.randint(1, 254))


def test_one_client_over_the_request_rate_gets_a_json_429():
    """One address asks on several kept-alive connections as fast as it can, until it is limited. nginx
    lets through the burst, plus the rate over the time taken, and no more: asking on past that without a
    429 means no limit applies, however fast or slow the machine is; a 429 before the burst is spent means
    the burst is not honoured."""
    client = unused_client_address()
    answers, lock, enough = [], threading.Lock(), threading.Event()
    started = time.monotonic()

    def allowed_by_now():
        return RATE_LIMIT_BURST + 2 + RATE_PER_SECOND * (time.monotonic() - started)

    def ask():
        connection = connect_from(client)
        try:
            while not enough.is_set() and time.monotonic() - started < RATE_LIMIT_DEADLINE_SECONDS:
                answer = get_on(connection, "/v1/version")
                with lock:
                    answers.append(answer)
                    passed = sum(1 for a in answers if a[0] == 200)
                    if answer[0] != 200 or passed > allowed_by_now():
                        enough.set()
        finally:
            connection.close()

    askers = [threading.Thread(target=ask) for _ in range(RATE_LIMIT_CONNECTIONS)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join()

    limited = [a for a in answers if a[0] == 429]
    passed = sum(1 for a in answers if a[0] == 200)
    assert limited, f"{passed} requests from one address in {time.monotonic() - started:.1f} s were never limited"
    assert {a[0] for a in answers} == {200, 429}, {a[0] for a in answers}
    status, content_type, retry_after, body = limited[0]
    assert content_type == "application/json" and retry_after, (content_type, retry_after)
    error = json.loads(body)["error"]
    assert error["code"] == "rate_limited" and error["message"], error
    assert passed >= RATE_LIMIT_BURST, "the burst allowance was not honoured"


def test_loopback_is_not_rate_limited():
    """Health checks and the host itself: 127.0.0.1 is exempt."""
    answers = [get_from("127.0.0.1", "/v1/version")[0] for _ in range(RATE_LIMIT_BURST + 150)]
    assert set(answers) == {200}, {a: answers.count(a) for a in set(answers)}


# --- calls to Apple at once ------------------------------------------------------------------------

def test_calls_to_apple_at_once_are_bounded(api, db, receipts, simulator):
    """The test stack runs with IAP_APPLE_MAX_CALLS=8: 16 verifies at once, each waiting 400 ms on Apple,
    go 8 at a time, and every one is delivered. Two rounds of 400 ms leave more than half of the 2 s
    budget (IAP_APPLE_TIMEOUT_MS) to a loaded machine's TLS handshakes and scheduling; three rounds of
    500 ms left a quarter, and one answer came back retry_later at a load of 8."""
    bound = int(os.environ["IAP_APPLE_MAX_CALLS"])
    simulator.control(latency_ms=400)
    user_id = new_user_id()
    made = [one_purchase_receipt(receipts) for _ in range(bound * 2)]
    start = threading.Barrier(len(made), timeout=30)

    def post(item):
        start.wait()
        return api.verify(item[0], user_id=user_id)

    with ThreadPoolExecutor(len(made)) as pool:
        answers = list(pool.map(post, made))

    assert [a.json()["status"] for a in answers] == ["delivered"] * len(made)
    stats = simulator.stats()
    assert stats["max_inflight"] == bound, f"at most {bound} calls at once, and that many: {stats}"
    assert stats["production"]["requests"] == len(made)
    assert db.delivered_count([tid for _, tid in made]) == len(made)


# --- the replay short-cut --------------------------------------------------------------------------

def test_a_delivered_receipt_sent_again_is_answered_without_apple(api, db, receipts, simulator):
    user_id = new_user_id()
    receipt, tid = one_purchase_receipt(receipts)
    assert_verify_answer(api.verify(receipt, user_id=user_id), "delivered")
    simulator.reset_stats()

    for _ in range(5):
        body = assert_verify_answer(api.verify(receipt, user_id=user_id), "already_delivered")
        assert [(t["transaction_id"], t["state"]) for t in body["transactions"]] == [(tid, "already_delivered")]

    assert simulator.requests_to("production") + simulator.requests_to("sandbox") == 0
    assert db.receipts_with_sha256(receipt_sha256(receipt)), "the receipt has no audit row"
    assert db.delivered_count([tid]) == 1
