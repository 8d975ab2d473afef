"""Receipt verification end to end: POST /v1/receipts/verify through nginx,
iap-fcgi, the App Store simulator and MariaDB. Each test checks the answer
against docs/api.md and the rows in `receipts`, `transactions` and `orders`."""
import base64
import hashlib
import json
import threading
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import pytest

from support import (PAY_30, PAY_6, PAY_98, answered_transactions, assert_error, wait_until,
                     assert_verify_answer, new_transaction_id, new_user_id, utc_now)

OTHER_BUNDLE_ID = "com.example.other"  # the stack's IAP_BUNDLE_IDS is com.example.game
PURCHASE_MS = 1406193061000  # 2014-07-24 09:11:01 UTC, the purchase_date of docs/api.md's example
HOUR_MS = 3600 * 1000


def purchases(receipts, *product_ids, **kwargs):
    """One purchase per product id, each with a fresh transaction id."""
    return [receipts.purchase(product_id, transaction_id=new_transaction_id(), **kwargs)
            for product_id in product_ids]


def transaction_ids(bought):
    return [purchase["transaction_id"] for purchase in bought]


def sha256_of(receipt_data):
    """SHA-256 (hex) of a receipt's decoded bytes, as the audit row keeps it."""
    return hashlib.sha256(base64.b64decode(receipt_data)).hexdigest()


def assert_nothing_delivered(db, user_id, ids):
    assert db.delivered_count(ids) == 0, f"transactions {ids} were delivered"
    delivered_orders = [o for o in db.orders_of(user_id) if o["status"] == "delivered"]
    assert delivered_orders == [], f"orders delivered to {user_id}: {delivered_orders}"


def assert_states(body, expected):
    """The answer lists exactly these transactions with these states ({transaction_id: state})."""
    states = {tid: t["state"] for tid, t in answered_transactions(body).items()}
    assert states == expected, f"transaction states {states}, expected {expected}"


# --- an iOS 7 receipt with three undelivered transactions ----------------------------------

class Delivery:
    """One verify request for a receipt of three purchases (pay_6, pay_30,
    pay_98), posted with a client order for pay_6 and the pay_6 transaction id."""

    def __init__(self, api, receipts):
        self.user_id = new_user_id()
        self.order_id = api.create_order(self.user_id, PAY_6)["order_id"]
        self.bought = purchases(receipts, PAY_6, PAY_30, PAY_98)
        self.ids = transaction_ids(self.bought)
        self.named_id = self.ids[0]
        self.other_ids = self.ids[1:]
        self.receipt = receipts.app_receipt(self.bought)
        self.response = self.post(api)

    def post(self, api):
        return api.verify(self.receipt, order_id=self.order_id, transaction_id=self.named_id,
                          user_id=self.user_id, app_version="1.2.0")


@pytest.fixture
def delivery(api, receipts):
    return Delivery(api, receipts)


def test_app_receipt_delivers_every_transaction(delivery):
    body = assert_verify_answer(delivery.response, "delivered")

    assert body["environment"] == "Production"
    assert body["apple_status"] == 0
    assert body["order_id"] == delivery.order_id
    assert_states(body, {tid: "delivered" for tid in delivery.ids})
    for purchase in delivery.bought:
        answered = answered_transactions(body)[purchase["transaction_id"]]
        assert answered["product_id"] == purchase["product_id"]
        assert answered["quantity"] == 1
        assert answered["cancellation_date"] is None


def test_named_transaction_is_bound_to_the_request_order(delivery, db):
    body = assert_verify_answer(delivery.response, "delivered")

    assert answered_transactions(body)[delivery.named_id]["order_id"] == delivery.order_id
    assert db.transaction(delivery.named_id)["order_id"] == delivery.order_id
    order = db.order(delivery.order_id)
    assert order["status"] == "delivered", f"the request's order is {order['status']!r}"
    assert order["origin"] == "client"


def test_other_transactions_get_new_orders_of_the_same_user(delivery, db):
    body = assert_verify_answer(delivery.response, "delivered")

    rows = db.transactions(delivery.other_ids)
    new_order_ids = {rows[tid]["order_id"] for tid in delivery.other_ids}
    assert None not in new_order_ids and delivery.order_id not in new_order_ids and len(new_order_ids) == 2, (
        f"the other transactions must each get a new order, got {new_order_ids}")
    for tid in delivery.other_ids:
        order = db.order(rows[tid]["order_id"])
        assert order["user_id"] == delivery.user_id
        assert order["product_id"] == rows[tid]["product_id"]
        assert order["origin"] == "receipt"
        assert order["status"] == "delivered"
        assert answered_transactions(body)[tid]["order_id"] == order["order_id"]
    assert len(db.orders_of(delivery.user_id)) == 3


def test_delivered_transactions_are_recorded(delivery, db):
    assert_verify_answer(delivery.response, "delivered")

    rows = db.transactions(delivery.ids)
    assert set(rows) == set(delivery.ids), f"transactions rows for {sorted(rows)}, expected {delivery.ids}"
    for purchase in delivery.bought:
        row = rows[purchase["transaction_id"]]
        assert row["product_id"] == purchase["product_id"]
        assert row["original_transaction_id"] == purchase["transaction_id"]
        assert row["user_id"] == delivery.user_id
        assert row["quantity"] == 1
        assert row["environment"] == "Production"
        assert row["state"] == "delivered"
        assert row["cancellation_date"] is None
        assert row["receipt_id"] is not None
        assert row["delivered_at"] is not None
        assert abs((utc_now() - row["delivered_at"]).total_seconds()) < 120, (
            f"delivered_at {row['delivered_at']} is not UTC now")
    assert len({row["receipt_id"] for row in rows.values()}) == 1, "all three came from one receipts row"


def test_receipt_is_recorded_for_audit(delivery, db):
    assert_verify_answer(delivery.response, "delivered")

    receipt_row = db.receipt(db.transaction(delivery.named_id)["receipt_id"])
    assert receipt_row["sha256"] == sha256_of(delivery.receipt)
    assert receipt_row["receipt_data"] == delivery.receipt
    assert receipt_row["order_id"] == delivery.order_id
    assert receipt_row["user_id"] == delivery.user_id
    assert receipt_row["client_ip"] in ("127.0.0.1", "::1"), f"client_ip {receipt_row['client_ip']!r}"
    assert receipt_row["environment"] == "Production"
    assert receipt_row["apple_status"] == 0
    assert receipt_row["apple_response"], "Apple's answer is not kept"
    assert receipt_row["verified_at"] is not None
    assert receipt_row["received_at"] <= receipt_row["verified_at"]


def test_reposting_a_receipt_answers_already_delivered_and_changes_nothing(delivery, api, db, simulator):
    assert_verify_answer(delivery.response, "delivered")
    transactions_before = db.transactions(delivery.ids)
    orders_before = db.orders_of(delivery.user_id)
    simulator.reset_stats()

    body = assert_verify_answer(delivery.post(api), "already_delivered")

    assert_states(body, {tid: "already_delivered" for tid in delivery.ids})
    assert db.transactions(delivery.ids) == transactions_before
    assert db.orders_of(delivery.user_id) == orders_before
    # The replay short-cut: the same bytes, verified and wholly delivered, are answered from the
    # database, without Apple; the request's audit row names the row it reused, not the bytes again.
    assert simulator.stats()["production"]["requests"] == 0, "a delivered receipt was sent to Apple again"
    first, replay = replay_rows(db, delivery.receipt, 2)
    assert replay["replay_of"] == first["receipt_id"] and first["replay_of"] is None
    assert replay["receipt_data"] is None and first["receipt_data"] == delivery.receipt
    assert (replay["user_id"], replay["client_ip"], replay["apple_status"]) == (delivery.user_id, "127.0.0.1", 0)
    assert replay["verified_at"] is not None and replay["environment"] == first["environment"]


def test_receipt_replayed_by_another_user_delivers_nothing_to_them(delivery, api, db):
    assert_verify_answer(delivery.response, "delivered")
    transactions_before = db.transactions(delivery.ids)
    thief = new_user_id()

    body = assert_verify_answer(api.verify(delivery.receipt, user_id=thief), "already_delivered")

    assert_states(body, {tid: "already_delivered" for tid in delivery.ids})
    assert db.orders_of(thief) == []
    assert db.transactions(delivery.ids) == transactions_before
    # Whoever investigates fraud finds the replay, and who made it.
    first, replay = replay_rows(db, delivery.receipt, 2)
    assert (replay["user_id"], replay["replay_of"]) == (thief, first["receipt_id"])


def replay_rows(db, receipt, count):
    """The audit rows of a receipt's bytes, once there are `count` (a replay's row is written just after
    its answer, by a thread of its own)."""
    wait_until(lambda: len(db.receipts_with_sha256(sha256_of(receipt))) >= count, 10, f"{count} audit rows")
    rows = db.receipts_with_sha256(sha256_of(receipt))
    assert len(rows) == count, rows
    return rows


def test_order_id_alone_names_the_user(api, db, receipts, create_order):
    user_id = new_user_id()
    order = create_order(user_id, PAY_6)
    bought = purchases(receipts, PAY_6)

    body = assert_verify_answer(api.verify(receipts.app_receipt(bought), order_id=order["order_id"]), "delivered")

    tid = bought[0]["transaction_id"]
    assert answered_transactions(body)[tid]["order_id"] == order["order_id"]
    assert db.transaction(tid)["user_id"] == user_id
    assert db.order(order["order_id"])["status"] == "delivered"


def test_purchase_date_is_kept_in_utc(api, db, receipts):
    bought = purchases(receipts, PAY_6, purchase_ms=PURCHASE_MS)
    tid = bought[0]["transaction_id"]

    body = assert_verify_answer(api.verify(receipts.app_receipt(bought), user_id=new_user_id()), "delivered")

    assert answered_transactions(body)[tid]["purchase_date"] == "2014-07-24T09:11:01Z"
    assert db.transaction(tid)["purchase_date"] == datetime(2014, 7, 24, 9, 11, 1)


# --- iOS 6 receipts and the ways clients send base64 --------------------------------------

def test_ios6_receipt_is_delivered_to_a_new_order(api, db, receipts):
    user_id = new_user_id()
    [purchase] = purchases(receipts, PAY_30)
    tid = purchase["transaction_id"]

    body = assert_verify_answer(api.verify(receipts.ios6_receipt(purchase), user_id=user_id), "delivered")

    assert_states(body, {tid: "delivered"})
    row = db.transaction(tid)
    assert row["state"] == "delivered" and row["product_id"] == PAY_30 and row["user_id"] == user_id
    order = db.order(row["order_id"])
    assert order["origin"] == "receipt"
    assert order["status"] == "delivered"
    assert order["product_id"] == PAY_30
    assert order["user_id"] == user_id


def test_receipt_data_under_apples_own_key(api, db, receipts):
    bought = purchases(receipts, PAY_6)
    body = {"receipt-data": receipts.app_receipt(bought), "user_id": new_user_id()}

    assert_verify_answer(api.post_json("/v1/receipts/verify", body), "delivered")
    assert db.delivered_count(transaction_ids(bought)) == 1


def test_line_wrapped_receipt_is_accepted(api, db, receipts):
    bought = purchases(receipts, PAY_6)
    receipt = receipts.app_receipt(bought)
    wrapped = receipts.wrap_lines(receipt, 76)
    assert "\n" in wrapped, "the test receipt is too short to wrap"

    assert_verify_answer(api.verify(wrapped, user_id=new_user_id()), "delivered")

    [audit] = db.receipts_with_sha256(sha256_of(receipt))
    assert audit["receipt_data"] == receipt, "the stored receipt is not normalised (line breaks removed)"
    assert db.delivered_count(transaction_ids(bought)) == 1


def receipt_with_a_plus(receipts):
    """A receipt whose base64 holds at least one '+' (most do; try a few)."""
    for _ in range(50):
        bought = purchases(receipts, PAY_6)
        receipt = receipts.app_receipt(bought)
        if "+" in receipt:
            return bought, receipt
    raise AssertionError("no receipt with a '+' in its base64 after 50 tries")


def test_spaces_are_read_as_plus(api, db, receipts):
    bought, receipt = receipt_with_a_plus(receipts)
    spaced = receipts.plus_as_space(receipt)
    assert " " in spaced and "+" not in spaced

    assert_verify_answer(api.verify(spaced, user_id=new_user_id()), "delivered")

    assert len(db.receipts_with_sha256(sha256_of(receipt))) == 1, "the receipt was not decoded as sent with '+'"
    assert db.delivered_count(transaction_ids(bought)) == 1


# --- sandbox receipts and the review switch ------------------------------------------------

def sandbox_receipt(receipts, *product_ids):
    bought = purchases(receipts, *product_ids)
    return bought, receipts.app_receipt(bought, environment="Sandbox")


def test_sandbox_receipt_goes_to_production_then_sandbox(api, simulator, receipts):
    _, receipt = sandbox_receipt(receipts, PAY_6)

    response = api.verify(receipt, user_id=new_user_id())

    assert response.status_code == 200, response.text
    assert response.json()["environment"] == "Sandbox"
    assert response.json()["apple_status"] == 0
    assert simulator.requests_to("production") == 1
    assert simulator.requests_to("sandbox") == 1


@pytest.mark.parametrize("app_version", ["1.0", None], ids=["app_version 1.0", "no app_version"])
def test_sandbox_receipt_is_rejected_without_a_review_version(api, db, receipts, app_version):
    user_id = new_user_id()
    bought, receipt = sandbox_receipt(receipts, PAY_6)

    body = assert_verify_answer(api.verify(receipt, user_id=user_id, app_version=app_version), "rejected")

    assert_states(body, {tid: "rejected" for tid in transaction_ids(bought)})
    assert_nothing_delivered(db, user_id, transaction_ids(bought))


def test_sandbox_receipt_is_delivered_to_the_version_in_review(api, db, receipts, service_settings):
    service_settings.apply(review_version="1.3.0")
    user_id = new_user_id()
    bought, receipt = sandbox_receipt(receipts, PAY_6)
    [tid] = transaction_ids(bought)

    body = assert_verify_answer(api.verify(receipt, user_id=user_id, app_version="1.3.0"), "delivered")

    assert body["environment"] == "Sandbox"
    row = db.transaction(tid)
    assert row["state"] == "delivered"
    assert row["environment"] == "Sandbox", "sandbox deliveries must stay out of revenue"
    assert db.receipt(row["receipt_id"])["environment"] == "Sandbox"


@pytest.mark.parametrize("app_version", ["1.2.0", None], ids=["app_version 1.2.0", "no app_version"])
def test_sandbox_receipt_is_rejected_for_other_app_versions(api, db, receipts, service_settings, app_version):
    service_settings.apply(review_version="1.3.0")
    user_id = new_user_id()
    bought, receipt = sandbox_receipt(receipts, PAY_6)

    assert_verify_answer(api.verify(receipt, user_id=user_id, app_version=app_version), "rejected")

    assert_nothing_delivered(db, user_id, transaction_ids(bought))


def test_sandbox_receipt_is_delivered_to_a_sandbox_user(api, db, receipts, service_settings):
    user_id = new_user_id()
    service_settings.apply(sandbox_users=f"someone-else,{user_id}")
    bought, receipt = sandbox_receipt(receipts, PAY_6)
    [tid] = transaction_ids(bought)

    body = assert_verify_answer(api.verify(receipt, user_id=user_id), "delivered")

    assert body["environment"] == "Sandbox"
    assert db.transaction(tid)["environment"] == "Sandbox"


# --- refunds, other apps, invalid and incomplete receipts ------------------------------------

def test_refunded_transaction_is_never_delivered(api, db, receipts):
    [paid] = purchases(receipts, PAY_6)
    [refunded] = purchases(receipts, PAY_30, purchase_ms=PURCHASE_MS, cancellation_ms=PURCHASE_MS + HOUR_MS)
    paid_id, refunded_id = paid["transaction_id"], refunded["transaction_id"]

    body = assert_verify_answer(api.verify(receipts.app_receipt([paid, refunded]), user_id=new_user_id()),
                                "delivered")

    assert_states(body, {paid_id: "delivered", refunded_id: "refunded"})
    assert answered_transactions(body)[refunded_id]["cancellation_date"] is not None
    row = db.transaction(refunded_id)
    assert row["state"] == "refunded"
    assert row["order_id"] is None
    assert row["delivered_at"] is None
    assert row["cancellation_date"] is not None


def test_receipt_with_only_refunded_transactions_is_not_paid(api, db, receipts):
    user_id = new_user_id()
    bought = purchases(receipts, PAY_6, purchase_ms=PURCHASE_MS, cancellation_ms=PURCHASE_MS + HOUR_MS)
    [tid] = transaction_ids(bought)

    body = assert_verify_answer(api.verify(receipts.app_receipt(bought), user_id=user_id), "not_paid")

    assert_states(body, {tid: "refunded"})
    assert db.transaction(tid)["state"] == "refunded"
    assert db.orders_of(user_id) == []


def test_delivered_transaction_seen_refunded_later_is_marked_refunded(api, db, receipts):
    user_id = new_user_id()
    tid = new_transaction_id()
    paid = receipts.purchase(PAY_6, transaction_id=tid, purchase_ms=PURCHASE_MS)
    assert_verify_answer(api.verify(receipts.app_receipt([paid]), user_id=user_id), "delivered")

    refunded = receipts.purchase(PAY_6, transaction_id=tid, purchase_ms=PURCHASE_MS,
                                 cancellation_ms=PURCHASE_MS + HOUR_MS)
    response = api.verify(receipts.app_receipt([refunded]), user_id=user_id)

    assert response.status_code == 200, response.text
    body = response.json()
    assert_states(body, {tid: "refunded"})
    row = db.transaction(tid)
    assert row["state"] == "refunded"
    assert row["cancellation_date"] is not None


def test_receipt_of_another_app_is_rejected(api, db, receipts):
    user_id = new_user_id()
    bought = purchases(receipts, PAY_6)
    receipt = receipts.app_receipt(bought, bundle_id=OTHER_BUNDLE_ID)

    body = assert_verify_answer(api.verify(receipt, user_id=user_id), "rejected")

    assert_states(body, {tid: "rejected" for tid in transaction_ids(bought)})
    assert_nothing_delivered(db, user_id, transaction_ids(bought))


def test_tampered_receipt_is_not_paid(api, db, receipts):
    user_id = new_user_id()
    bought = purchases(receipts, PAY_6)
    tampered = receipts.tampered(receipts.app_receipt(bought))

    body = assert_verify_answer(api.verify(tampered, user_id=user_id), "not_paid")

    assert body["apple_status"] == 21003
    [audit] = db.receipts_with_sha256(sha256_of(tampered))
    assert audit["apple_status"] == 21003
    assert_nothing_delivered(db, user_id, transaction_ids(bought))


def test_named_transaction_missing_from_the_receipt_is_pending(api, db, receipts, create_order):
    user_id = new_user_id()
    order = create_order(user_id, PAY_6)
    missing_id = new_transaction_id()

    body = assert_verify_answer(api.verify(receipts.app_receipt([]), order_id=order["order_id"],
                                           transaction_id=missing_id, user_id=user_id), "pending")

    assert body["apple_status"] == 0
    assert db.transaction(missing_id) is None
    assert db.order(order["order_id"])["status"] == "created", "a pending order must stay open"


def test_empty_receipt_without_a_named_transaction_is_not_paid(api, db, receipts):
    user_id = new_user_id()

    body = assert_verify_answer(api.verify(receipts.app_receipt([]), user_id=user_id), "not_paid")

    assert body["apple_status"] == 0
    assert db.orders_of(user_id) == []


# --- concurrency ------------------------------------------------------------------------------

CONCURRENT_POSTS = 50


def describe(response):
    """(HTTP status, verify status) of an answer, or the start of the text when it is not JSON."""
    try:
        return response.status_code, response.json().get("status")
    except ValueError:
        return response.status_code, response.text[:80]


def test_concurrent_posts_of_one_receipt_deliver_each_transaction_once(api, db, receipts):
    user_id = new_user_id()
    bought = purchases(receipts, PAY_6, PAY_30, PAY_98)
    ids = transaction_ids(bought)
    receipt = receipts.app_receipt(bought)
    start = threading.Barrier(CONCURRENT_POSTS, timeout=30)

    def post(_):
        start.wait()
        return api.verify(receipt, user_id=user_id)

    with ThreadPoolExecutor(max_workers=CONCURRENT_POSTS) as pool:
        responses = list(pool.map(post, range(CONCURRENT_POSTS)))

    answers = Counter(describe(r) for r in responses)
    assert set(answers) <= {(200, "delivered"), (200, "already_delivered")}, f"answers: {dict(answers)}"
    deliveries = Counter(tid for r in responses
                         for tid, t in answered_transactions(r.json()).items() if t["state"] == "delivered")
    assert deliveries == {tid: 1 for tid in ids}, f"'delivered' per transaction across answers: {dict(deliveries)}"

    rows = db.transactions(ids)
    assert len(rows) == 3 and all(row["state"] == "delivered" for row in rows.values()), rows
    orders = db.orders_of(user_id)
    assert len(orders) == 3, f"{len(orders)} orders for 3 transactions"
    assert {o["order_id"] for o in orders} == {row["order_id"] for row in rows.values()}
    assert all(o["origin"] == "receipt" and o["status"] == "delivered" for o in orders), orders


def test_verifications_answered_together_deliver_as_one_at_a_time_would(api, db, simulator, receipts):
    """Apple's answers that arrive together are recorded together (one database
    transaction, one statement per table); every kind of receipt among them must
    still get the answer and the rows it gets alone."""
    user_id = new_user_id()
    prices = {row["product_id"]: row["price"] for row in db.query("SELECT product_id, price FROM products")}
    earlier = purchases(receipts, PAY_30)
    assert_verify_answer(api.verify(receipts.app_receipt(earlier), user_id=user_id), "delivered")
    shared = purchases(receipts, PAY_98)
    cases = []  # (receipt, request fields, {transaction id: expected state or None when either})
    for _ in range(8):  # each with its own order, which the named transaction pays
        bought = purchases(receipts, PAY_6)
        order_id = api.create_order(user_id, PAY_6)["order_id"]
        cases.append((bought, {"order_id": order_id, "transaction_id": bought[0]["transaction_id"]},
                       {bought[0]["transaction_id"]: "delivered"}))
    for _ in range(8):  # two purchases, no order: both get orders made on delivery
        bought = purchases(receipts, PAY_6, PAY_30)
        cases.append((bought, {}, dict.fromkeys(transaction_ids(bought), "delivered")))
    for _ in range(3):  # with a transaction delivered before
        bought = earlier + purchases(receipts, PAY_6)
        cases.append((bought, {}, {earlier[0]["transaction_id"]: "already_delivered",
                                   bought[1]["transaction_id"]: "delivered"}))
    for _ in range(3):  # with a refunded transaction
        bought = purchases(receipts, PAY_6) + purchases(receipts, PAY_30, purchase_ms=PURCHASE_MS,
                                                         cancellation_ms=PURCHASE_MS + HOUR_MS)
        cases.append((bought, {}, {bought[0]["transaction_id"]: "delivered", bought[1]["transaction_id"]: "refunded"}))
    for _ in range(3):  # a product outside the catalog
        bought = purchases(receipts, "com.example.game.retired")
        cases.append((bought, {}, dict.fromkeys(transaction_ids(bought), "delivered")))
    for _ in range(4):  # different receipts sharing one transaction: it is delivered once
        bought = shared + purchases(receipts, PAY_6)
        cases.append((bought, {}, {shared[0]["transaction_id"]: None, bought[1]["transaction_id"]: "delivered"}))
    simulator.control(latency_ms=300)
    start = threading.Barrier(len(cases), timeout=30)

    def post(case):
        bought, fields, _ = case
        start.wait()
        return api.verify(receipts.app_receipt(bought), user_id=user_id, **fields)

    with ThreadPoolExecutor(max_workers=len(cases)) as pool:
        responses = list(pool.map(post, cases))

    shared_deliveries = 0
    for (bought, fields, expected), response in zip(cases, responses):
        assert response.status_code == 200, response.text
        states = {tid: t["state"] for tid, t in answered_transactions(response.json()).items()}
        assert set(states) == set(expected), (states, expected)
        for tid, state in expected.items():
            assert state is None or states[tid] == state, (tid, states, expected)
        shared_deliveries += states.get(shared[0]["transaction_id"]) == "delivered"
        if "order_id" in fields:
            assert response.json()["order_id"] == fields["order_id"]
            assert db.order(fields["order_id"])["status"] == "delivered"
    assert shared_deliveries == 1, f"the shared transaction was delivered {shared_deliveries} times"

    delivered = {tid for _, _, expected in cases for tid, state in expected.items() if state != "already_delivered"}
    rows = db.transactions(delivered)
    assert set(rows) == delivered
    orders = {o["order_id"]: o for o in db.orders_of(user_id)}
    for tid, row in rows.items():
        if row["state"] == "refunded":
            assert row["order_id"] is None, row
            continue
        order = orders[row["order_id"]]
        assert order["status"] == "delivered" and order["product_id"] == row["product_id"], (row, order)
        assert order["price"] == prices.get(row["product_id"], 0), (row, order)
    assert sum(1 for o in orders.values() if o["origin"] == "client") == 8
    # Each receipt row holds Apple's answer to its own bytes, and each transaction row names the
    # receipt row that delivered it: rows recorded and answered together are not mixed up.
    stored = db.query("SELECT receipt_id, receipt_data, apple_status, apple_response, verified_at FROM receipts"
                      " WHERE user_id = %s", user_id)
    assert len(stored) == len(cases) + 1
    in_receipt = {}
    for row in stored:
        assert row["verified_at"] is not None and row["apple_status"] == 0, row["receipt_id"]
        posted = {p["transaction_id"] for p in receipts.decode(row["receipt_data"])["in_app"]}
        answered = {t["transaction_id"] for t in json.loads(row["apple_response"])["receipt"]["in_app"]}
        assert answered == posted, (row["receipt_id"], answered, posted)
        in_receipt[row["receipt_id"]] = posted
    for tid, row in rows.items():
        assert tid in in_receipt[row["receipt_id"]], (tid, row["receipt_id"])


# --- Apple failing -----------------------------------------------------------------------------

APPLE_FAULTS = {
    "slower than the timeout": {"latency_ms": 2500},  # the test stack's IAP_APPLE_TIMEOUT_MS is 2000
    "unavailable until cleared": {"force_status": 21005, "fail_next": 0},
    "connection dropped": {"drop_connection": True, "fail_next": 0},
}


@pytest.mark.parametrize("fault", APPLE_FAULTS.values(), ids=APPLE_FAULTS.keys())
def test_apple_fault_defers_delivery_until_apple_recovers(api, db, simulator, receipts, fault):
    assert_fault_defers_delivery(api, db, simulator, receipts, fault)


@pytest.mark.outage("simulator")
def test_untrusted_certificate_defers_delivery_until_apple_recovers(api, db, simulator, receipts,
                                                                    simulator_restarted):
    assert_fault_defers_delivery(api, db, simulator, receipts, {"tls": "untrusted"}, calls_during_fault=0)


def assert_fault_defers_delivery(api, db, simulator, receipts, fault, calls_during_fault=None):
    """With `fault` on, a verify request is answered retry_later with its receipt
    kept and nothing delivered; once the fault is cleared, the same request delivers.
    calls_during_fault: when given, the verifyReceipt calls that must have reached the simulator."""
    user_id = new_user_id()
    order_id = api.create_order(user_id, PAY_6)["order_id"]
    bought = purchases(receipts, PAY_6)
    [tid] = transaction_ids(bought)
    receipt = receipts.app_receipt(bought)
    simulator.control(**fault)

    failed = api.verify(receipt, order_id=order_id, transaction_id=tid, user_id=user_id)

    assert_verify_answer(failed, "retry_later")
    [kept] = db.receipts_with_sha256(sha256_of(receipt))
    assert kept["apple_status"] in (None, fault.get("force_status")), f"apple_status {kept['apple_status']}"
    assert_nothing_delivered(db, user_id, [tid])
    assert db.order(order_id)["status"] == "created"
    if calls_during_fault is not None:
        assert simulator.requests_to("production") == calls_during_fault, f"calls to Apple during {fault}"

    simulator.reset()
    body = assert_verify_answer(api.verify(receipt, order_id=order_id, transaction_id=tid, user_id=user_id),
                                "delivered")

    assert_states(body, {tid: "delivered"})
    assert db.order(order_id)["status"] == "delivered"


RETRY_CASES = {
    "21005 once": ({"force_status": 21005, "fail_next": 1}, 2, "delivered"),
    "21100 is-retryable once": ({"force_status": 21100, "fail_next": 1, "is_retryable": True}, 2, "delivered"),
    "21100 is_retryable once": ({"force_status": 21100, "fail_next": 1, "is_retryable": True,
                                 "retryable_key": "is_retryable"}, 2, "delivered"),
    "21100 not retryable": ({"force_status": 21100, "fail_next": 1}, 1, "retry_later"),
    "21002 always": ({"force_status": 21002, "fail_next": 0}, 3, "not_paid"),
    "21005 always": ({"force_status": 21005, "fail_next": 0}, 3, "retry_later"),
}


@pytest.mark.parametrize("fault, calls, status", RETRY_CASES.values(), ids=RETRY_CASES.keys())
def test_apple_retries(api, simulator, receipts, fault, calls, status):
    bought = purchases(receipts, PAY_6)
    simulator.control(**fault)

    assert_verify_answer(api.verify(receipts.app_receipt(bought), user_id=new_user_id()), status)

    assert simulator.requests_to("production") == calls, f"production calls for {fault}"
    assert simulator.requests_to("sandbox") == 0


# --- the database down ----------------------------------------------------------------------------

@pytest.mark.outage("mariadb")
def test_apple_is_not_called_while_the_database_is_down(api, simulator, receipts, database_down):
    receipt = receipts.app_receipt(purchases(receipts, PAY_6))

    body = assert_verify_answer(api.verify(receipt, user_id=new_user_id()), "retry_later")

    assert body["apple_status"] is None
    assert simulator.requests_to("production") == 0, "Apple was called for a receipt that was not recorded"


# --- input errors: answered before anything is recorded ------------------------------------------

def assert_refused_without_a_receipt_row(db, response, http_status, code, receipts_before):
    assert_error(response, http_status, code)
    assert db.receipt_count() == receipts_before, "a refused request added a receipts row"


def test_verify_without_receipt_data_is_refused(api, db):
    before = db.receipt_count()
    response = api.post_json("/v1/receipts/verify", {"user_id": new_user_id()})

    assert_refused_without_a_receipt_row(db, response, 400, "missing_field", before)


def test_verify_with_receipt_data_that_is_not_base64_is_refused(api, db):
    before = db.receipt_count()
    response = api.verify("this is *not* base64!", user_id=new_user_id())

    assert_refused_without_a_receipt_row(db, response, 400, "invalid_receipt_data", before)


def test_verify_with_an_unknown_order_is_refused(api, db, receipts):
    receipt = receipts.app_receipt(purchases(receipts, PAY_6))
    before = db.receipt_count()
    response = api.verify(receipt, order_id=str(uuid.uuid4()), user_id=new_user_id())

    assert_refused_without_a_receipt_row(db, response, 404, "unknown_order", before)


def test_verify_with_the_order_of_another_user_is_refused_with_an_audit_row(api, db, simulator, receipts, create_order):
    """Past the input checks: the 409 leaves its audit row (docs/tables.md "The purchase ledger"), and Apple is
    not asked."""
    order = create_order(new_user_id(), PAY_6)
    receipt = receipts.app_receipt(purchases(receipts, PAY_6))
    asker = new_user_id()
    response = api.verify(receipt, order_id=order["order_id"], user_id=asker)

    assert_error(response, 409, "order_user_mismatch")
    [row] = db.query("SELECT kind, user_id, order_id, apple_status, environment, verified_at, received_at"
                     " FROM receipts WHERE user_id = %s", asker)
    assert (row["kind"], row["order_id"], row["apple_status"], row["environment"]) == (
        "receipt", order["order_id"], None, None), row
    assert row["verified_at"] == row["received_at"], "closed at once: retry-pending leaves it alone"
    assert simulator.requests_to("production") == 0
    assert db.scalar("SELECT COUNT(*) FROM transactions WHERE user_id = %s", asker) == 0


def test_verify_without_user_or_order_is_refused(api, db, receipts):
    receipt = receipts.app_receipt(purchases(receipts, PAY_6))
    before = db.receipt_count()
    response = api.verify(receipt)

    assert_refused_without_a_receipt_row(db, response, 400, "missing_field", before)
