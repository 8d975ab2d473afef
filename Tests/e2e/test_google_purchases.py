"""docs/api.md "POST /v1/google/purchases/verify": a Google Play purchase read from the Google Play
double (Tests/Simulator/googleplay_sim.py) with productsv2, never believed from the client, delivered
exactly once per purchase token on the same ledger as Apple's (`transactions.store` google_play, a
`delivered` event, a `receipts` row of kind google per request), and consumed at Google through the
`google_finishes` outbox."""
import concurrent.futures
import hashlib
import os
import uuid

import pytest
import requests

from support import PAY_6, PAY_30, assert_error, assert_verify_answer, new_user_id, wait_until

PACKAGE = "com.example.game"
ROUTE = "/v1/google/purchases/verify"


@pytest.fixture(scope="module")
def google():
    url = os.environ.get("GOOGLE_SIM_CONTROL_URL")
    if not url:
        pytest.fail("GOOGLE_SIM_CONTROL_URL is not set: eval \"$(scripts/stack env)\"", pytrace=False)
    return url


@pytest.fixture(autouse=True)
def google_without_faults(google):
    requests.post(google + "/control", json={"fault": None, "fault_next": 0}, timeout=10).raise_for_status()
    yield
    requests.post(google + "/control", json={"fault": None, "fault_next": 0}, timeout=10).raise_for_status()


def purchase(google, **fields):
    """A purchase at the double; returns it (with its purchase_token)."""
    answer = requests.post(google + "/purchases", json={"package_name": PACKAGE, "product_id": PAY_6, **fields},
                           timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()


def at_google(google, token):
    return requests.get(google + "/purchases/" + requests.utils.quote(token, safe=""), timeout=10).json()


def calls(google, endpoint, token):
    """The double's calls of `endpoint` for `token`."""
    document = requests.get(google + "/calls", timeout=10).json()
    quoted = requests.utils.quote(token, safe="")
    return [c for c in document["calls"] if c["endpoint"] == endpoint and (token in c["path"] or quoted in c["path"])]


def tokens_issued(google):
    return requests.get(google + "/calls", timeout=10).json()["tokens_issued"]


def metric(name):
    """The value of one sample line of the service's /metrics (None when absent)."""
    listen = os.environ.get("IAP_METRICS_LISTEN")
    assert listen, "IAP_METRICS_LISTEN is not set: export the stack's environment (scripts/stack env)"
    text = requests.get(f"http://{listen}/metrics", timeout=10).text
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return None


def verify(api, token, user_id=None, product_id=PAY_6, package=PACKAGE, **fields):
    document = {"package_name": package, "product_id": product_id, "purchase_token": token, **fields}
    if user_id is not None:
        document["user_id"] = user_id
    return api.post_json(ROUTE, document)


def sha256(token):
    return hashlib.sha256(token.encode()).hexdigest()


def test_a_purchase_is_delivered_once_and_the_same_token_again_is_already_delivered(api, db, google):
    user = new_user_id()
    bought = purchase(google, quantity=3)
    first = assert_verify_answer(verify(api, bought["purchase_token"], user), "delivered")
    assert first["store"] == "google_play" and first["environment"] == "Production", first
    [entry] = first["transactions"]
    assert (entry["transaction_id"], entry["product_id"], entry["quantity"], entry["state"]) == (
        bought["order_id"], PAY_6, 3, "delivered"), entry
    row = db.one("SELECT * FROM transactions WHERE purchase_token_sha256 = %s", sha256(bought["purchase_token"]))
    assert (row["transaction_id"], row["store"], row["user_id"], row["state"], row["quantity"]) == (
        bought["order_id"], "google_play", user, "delivered", 3), row
    assert row["purchase_token"] == bought["purchase_token"]
    assert db.one("SELECT status FROM orders WHERE order_id = %s", first["order_id"])["status"] == "delivered"

    again = assert_verify_answer(verify(api, bought["purchase_token"], new_user_id()), "already_delivered")
    assert again["store"] == "google_play" and again["transactions"][0]["state"] == "already_delivered", again
    events = db.query("SELECT type, store FROM events WHERE transaction_id = %s", bought["order_id"])
    assert events == [{"type": "delivered", "store": "google_play"}], events
    audit = db.query("SELECT kind, user_id, transaction_id FROM receipts WHERE sha256 = %s",
                     sha256(bought["purchase_token"]))
    assert len(audit) == 2 and {r["kind"] for r in audit} == {"google"}, audit


def test_two_concurrent_requests_for_one_token_deliver_once(api, db, google):
    bought = purchase(google)
    users = [new_user_id(), new_user_id()]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda user: verify(api, bought["purchase_token"], user), users))
    statuses = sorted(answer.json()["status"] for answer in answers)
    assert statuses == ["already_delivered", "delivered"], [a.text for a in answers]
    assert db.scalar("SELECT COUNT(*) FROM transactions WHERE purchase_token_sha256 = %s",
                     sha256(bought["purchase_token"])) == 1
    assert db.scalar("SELECT COUNT(*) FROM events WHERE transaction_id = %s AND type = 'delivered'",
                     bought["order_id"]) == 1


def test_a_pending_purchase_is_202_and_nothing_is_delivered(api, db, google):
    bought = purchase(google, state="PENDING")
    body = assert_verify_answer(verify(api, bought["purchase_token"], new_user_id()), "pending")
    assert body["store"] == "google_play" and body["transactions"] == [], body
    assert db.scalar("SELECT COUNT(*) FROM transactions WHERE transaction_id = %s", bought["order_id"]) == 0
    assert db.scalar("SELECT COUNT(*) FROM receipts WHERE sha256 = %s AND kind = 'google'",
                     sha256(bought["purchase_token"])) == 1


def test_a_cancelled_purchase_and_a_token_google_does_not_know_are_not_paid(api, db, google):
    cancelled = purchase(google, state="CANCELLED")
    assert_verify_answer(verify(api, cancelled["purchase_token"], new_user_id()), "not_paid")
    unknown = "unknown-" + uuid.uuid4().hex
    assert_verify_answer(verify(api, unknown, new_user_id()), "not_paid")
    assert db.scalar("SELECT COUNT(*) FROM receipts WHERE sha256 IN (%s, %s) AND kind = 'google'",
                     sha256(cancelled["purchase_token"]), sha256(unknown)) == 2
    assert db.scalar("SELECT COUNT(*) FROM transactions WHERE transaction_id = %s", cancelled["order_id"]) == 0


def test_another_package_or_product_is_rejected(api, db, google):
    other_package = purchase(google, package_name="com.example.other")
    body = assert_verify_answer(
        verify(api, other_package["purchase_token"], new_user_id(), package="com.example.other"), "rejected")
    assert body["transactions"][0]["state"] == "rejected", body
    other_product = purchase(google, product_id=PAY_30)
    assert_verify_answer(verify(api, other_product["purchase_token"], new_user_id(), product_id=PAY_6), "rejected")
    assert db.scalar("SELECT COUNT(*) FROM transactions WHERE transaction_id IN (%s, %s)",
                     other_package["order_id"], other_product["order_id"]) == 0


def test_a_test_purchase_follows_the_sandbox_policy(api, db, google, service_settings):
    user = new_user_id()
    tester = purchase(google, test=True)
    assert_verify_answer(verify(api, tester["purchase_token"], user), "rejected")
    service_settings.apply(sandbox_users=user)
    try:
        body = assert_verify_answer(verify(api, tester["purchase_token"], user), "delivered")
    finally:
        service_settings.restore_defaults()
    assert body["environment"] == "Sandbox", body
    assert db.one("SELECT environment FROM transactions WHERE transaction_id = %s",
                  tester["order_id"])["environment"] == "Sandbox"


def test_the_account_id_names_the_order_and_another_users_order_is_409(api, db, google, create_order):
    owner = new_user_id()
    order = create_order(owner, PAY_6)["order_id"]
    bought = purchase(google, obfuscated_account_id=order)
    intruder = new_user_id()
    assert_error(verify(api, bought["purchase_token"], intruder), 409, "order_user_mismatch")
    assert db.scalar("SELECT COUNT(*) FROM transactions WHERE transaction_id = %s", bought["order_id"]) == 0
    assert db.scalar("SELECT COUNT(*) FROM receipts WHERE sha256 = %s AND user_id = %s",
                     sha256(bought["purchase_token"]), intruder) == 1
    body = assert_verify_answer(verify(api, bought["purchase_token"], owner), "delivered")
    assert body["order_id"] == order and body["transactions"][0]["order_id"] == order, body
    assert db.order(order)["status"] == "delivered"


def test_the_outbox_consumes_once_at_google(api, db, google):
    finished = 'iap_google_finishes_total{action="consume",result="finished"}'
    before = metric(finished) or 0
    bought = purchase(google)
    assert_verify_answer(verify(api, bought["purchase_token"], new_user_id()), "delivered")
    wait_until(lambda: at_google(google, bought["purchase_token"])["consumed"], 10, "the purchase consumed at Google")
    wait_until(lambda: db.scalar("SELECT COUNT(*) FROM google_finishes WHERE transaction_id = %s",
                                 bought["order_id"]) == 0, 10, "the google_finishes row gone")
    assert db.one("SELECT finished_at FROM transactions WHERE transaction_id = %s",
                  bought["order_id"])["finished_at"] is not None
    consumes = calls(google, "consume", bought["purchase_token"])
    assert [c["status"] for c in consumes] == [200], consumes
    wait_until(lambda: (metric(finished) or 0) >= before + 1, 10, f"{finished} counting the consume")
    assert metric("iap_google_finishes_oldest_age_seconds") is not None


def test_a_401_from_google_gets_one_new_token_and_one_retry(api, db, google):
    bought = purchase(google)
    before = tokens_issued(google)
    requests.post(google + "/control", json={"fault": 401, "fault_next": 1, "fault_on": "api"},
                  timeout=10).raise_for_status()
    assert_verify_answer(verify(api, bought["purchase_token"], new_user_id()), "delivered")
    reads = calls(google, "productsv2", bought["purchase_token"])
    assert [c["status"] for c in reads] == [401, 200], reads
    assert tokens_issued(google) - before == 1


def test_a_401_that_persists_is_retry_later_with_its_audit_row(api, db, google):
    bought = purchase(google)
    requests.post(google + "/control", json={"fault": 401, "fault_next": 0, "fault_on": "api"},
                  timeout=10).raise_for_status()
    assert_verify_answer(verify(api, bought["purchase_token"], new_user_id()), "retry_later")
    reads = calls(google, "productsv2", bought["purchase_token"])
    assert [c["status"] for c in reads] == [401, 401], reads
    assert db.scalar("SELECT COUNT(*) FROM receipts WHERE sha256 = %s AND kind = 'google'",
                     sha256(bought["purchase_token"])) == 1
