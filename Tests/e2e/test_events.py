"""The `events` table (docs/events.md): every delivery, and every refund of a
delivered transaction, adds its row in the database transaction of the change, by every path
(receipt verify one by one or in a batch, signed transaction verify; retry-pending is held to
the same rule by the fault tests' `Ledger.check`). The pull SQL of docs/events.md claims an event once.
"""
import importlib
import os
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from invariants import assert_events_follow_transactions
from support import PAY_6, PAY_30, assert_verify_answer, new_transaction_id, new_user_id, placeholders

CERTS = Path(os.environ.get("IAP_RUN", "/tmp/iap")) / "certs"
PURCHASE_MS = 1406193061000
HOUR_MS = 3600 * 1000
# What docs/events.md tells the game to run, in the database transaction that grants the goods.
CLAIM_SQL = "UPDATE events SET consumed_at = UTC_TIMESTAMP(3) WHERE event_id = %s AND consumed_at IS NULL"


def events_of(db, *transaction_ids):
    return db.query(f"SELECT * FROM events WHERE transaction_id IN ({placeholders(transaction_ids)})"
                    " ORDER BY event_id", *transaction_ids)


def assert_delivered_event(event, transaction_row):
    """The event repeats what the transaction's row says, and waits for the game."""
    for column in ("transaction_id", "original_transaction_id", "order_id", "user_id", "product_id",
                   "quantity", "environment"):
        assert event[column] == transaction_row[column], f"{column}: event {event} against row {transaction_row}"
    assert event["type"] == "delivered"
    assert event["status"] == "pending" and event["attempts"] == 0 and event["consumed_at"] is None, event
    assert abs(event["occurred_at"] - transaction_row["delivered_at"]) < timedelta(seconds=1), event
    assert event["created_at"] == transaction_row["delivered_at"], "the event is written with the delivery"


def test_a_receipt_delivery_adds_one_event_per_transaction_and_a_replay_none(api, db, receipts):
    user_id = new_user_id()
    bought = [receipts.purchase(product, transaction_id=new_transaction_id()) for product in (PAY_6, PAY_30)]
    receipt = receipts.app_receipt(bought)
    ids = [purchase["transaction_id"] for purchase in bought]

    assert_verify_answer(api.verify(receipt, user_id=user_id), "delivered")
    assert_verify_answer(api.verify(receipt, user_id=user_id), "already_delivered")

    events = events_of(db, *ids)
    assert sorted(event["transaction_id"] for event in events) == sorted(ids), events
    for event in events:
        assert_delivered_event(event, db.transaction(event["transaction_id"]))


def test_receipts_delivered_together_each_add_their_event(api, db, receipts):
    """40 receipts at once: the delivery threads take them in batches (BatchDelivery)."""
    users = [new_user_id() for _ in range(40)]
    bought = [receipts.purchase(PAY_6, transaction_id=new_transaction_id()) for _ in users]

    def post(index):
        return api.verify(receipts.app_receipt([bought[index]]), user_id=users[index])
    with ThreadPoolExecutor(max_workers=40) as pool:
        answers = list(pool.map(post, range(len(users))))

    for answer in answers:
        assert_verify_answer(answer, "delivered")
    ids = [purchase["transaction_id"] for purchase in bought]
    events = events_of(db, *ids)
    assert len(events) == len(ids), f"{len(events)} events for {len(ids)} deliveries"
    rows = db.transactions(ids)
    for event in events:
        assert_delivered_event(event, rows[event["transaction_id"]])
    assert_events_follow_transactions(db, ids)


def test_a_signed_transaction_delivery_adds_its_event(api, db):
    signer = importlib.import_module("signed_data")
    user_id = new_user_id()
    payload = signer.transaction(PAY_6)
    jws = signer.sign(payload, str(CERTS))

    for status in ("delivered", "already_delivered"):
        assert_verify_answer(api.post_json("/v1/transactions/verify",
                                           {"signed_transaction": jws, "user_id": user_id}), status)

    [event] = events_of(db, payload["transactionId"])
    assert_delivered_event(event, db.transaction(payload["transactionId"]))


def test_a_refund_of_a_delivered_transaction_adds_a_refunded_event_at_apples_date(api, db, receipts):
    user_id = new_user_id()
    tid = new_transaction_id()
    paid = receipts.purchase(PAY_6, transaction_id=tid, purchase_ms=PURCHASE_MS)
    assert_verify_answer(api.verify(receipts.app_receipt([paid]), user_id=user_id), "delivered")
    refunded = receipts.purchase(PAY_6, transaction_id=tid, purchase_ms=PURCHASE_MS,
                                 cancellation_ms=PURCHASE_MS + HOUR_MS)

    for _ in range(2):  # the second sight of the refund changes nothing
        api.verify(receipts.app_receipt([refunded]), user_id=user_id)

    delivered, taken_back = events_of(db, tid)
    assert (delivered["type"], taken_back["type"]) == ("delivered", "refunded")
    assert taken_back["event_id"] > delivered["event_id"]
    assert (taken_back["order_id"], taken_back["user_id"]) == (delivered["order_id"], user_id)
    assert taken_back["occurred_at"] == datetime.utcfromtimestamp((PURCHASE_MS + HOUR_MS) / 1000)
    assert_events_follow_transactions(db, [tid])


def test_a_transaction_refunded_before_it_was_delivered_adds_no_event(api, db, receipts):
    tid = new_transaction_id()
    refunded = receipts.purchase(PAY_6, transaction_id=tid, purchase_ms=PURCHASE_MS,
                                 cancellation_ms=PURCHASE_MS + HOUR_MS)

    assert_verify_answer(api.verify(receipts.app_receipt([refunded]), user_id=new_user_id()), "not_paid")

    assert db.transaction(tid)["state"] == "refunded"
    assert events_of(db, tid) == [], "nothing was granted, so nothing is taken back"


def test_the_pull_sql_claims_an_event_once(api, db, receipts):
    tid = new_transaction_id()
    receipt = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=tid)])
    assert_verify_answer(api.verify(receipt, user_id=new_user_id()), "delivered")
    [event] = events_of(db, tid)

    first, second = db.execute(CLAIM_SQL, event["event_id"]), db.execute(CLAIM_SQL, event["event_id"])

    assert (first, second) == (1, 0), "the game grants only when one row changed"
    assert db.one("SELECT consumed_at FROM events WHERE event_id = %s", event["event_id"])["consumed_at"]


@pytest.mark.runs_last
def test_every_transaction_of_the_run_has_the_events_its_state_calls_for(db):
    assert db.scalar("SELECT COUNT(*) FROM events") > 0, "the run delivered nothing?"
    assert_events_follow_transactions(db)
