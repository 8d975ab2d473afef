"""Helpers of the notification tests (test_notifications*.py): notifications signed with the stack's
test PKI (Tests/Simulator/notifications.py), posted through nginx, and the rows they leave."""
import os
import time
from pathlib import Path

import notifications
import signed_data

from support import PAY_6, assert_verify_answer, new_transaction_id

ROUTE = "/v1/notifications/apple"
CERTS = str(Path(os.environ.get("IAP_RUN", "/tmp/iap")) / "certs")


def now_ms():
    return int(time.time() * 1000)


def purchase(product=PAY_6, **fields):
    """A transaction payload (signed_data.transaction), with a fresh id unless one is given."""
    fields.setdefault("transaction_id", new_transaction_id())
    return signed_data.transaction(product, **fields)


def refunded(payload, revocation_ms=None, revocation_type="REFUND_FULL", percentage=100000, reason=0):
    """The same transaction as Apple shows it once refunded."""
    return dict(payload, revocationDate=revocation_ms or now_ms(), revocationReason=reason,
                revocationType=revocation_type, revocationPercentage=percentage)


def signed(notification_type, payload=None, **fields):
    """(signedPayload, notification payload)."""
    return notifications.signed_notification(CERTS, notification_type, payload, **fields)


def post(api, signed_payload):
    return api.post_json(ROUTE, {"signedPayload": signed_payload})


def send(api, notification_type, payload=None, **fields):
    """Signs and posts one notification that must be accepted; returns its payload."""
    jws, notification = signed(notification_type, payload, **fields)
    answer = post(api, jws)
    assert answer.status_code == 200, f"{notification_type}: {answer.status_code} {answer.text[:300]}"
    assert answer.json() == {"status": "accepted", "notification_uuid": notification["notificationUUID"]}
    return notification


def signed_transaction(payload):
    return signed_data.sign(payload, CERTS)


def notification_row(db, notification_uuid):
    return db.one("SELECT * FROM notifications WHERE notification_uuid = %s", notification_uuid)


def events_of(db, transaction_id):
    """The transaction's events, oldest first, as (type, user_id, order_id)."""
    return [(row["type"], row["user_id"], row["order_id"]) for row in db.query(
        "SELECT type, user_id, order_id FROM events WHERE transaction_id = %s ORDER BY event_id", transaction_id)]


def event_invariant_violations(db):
    """The SQL invariants of the events table over the whole database (refund_requested and subscription_changed
    left out):
    - no transaction has two `delivered` events without a `refunded` between them (grants and take-backs
      alternate, starting with a grant: delivered or refund_reversed); a Google quantity-based partial refund
      (`refunded_quantity` set) ends the grant only once the refunds add up to the quantity;
    - a transaction delivered now has one grant more than take-backs; one refunded after it was delivered
      (it kept its order) has as many, at least one `refunded` among them; one never delivered has none."""
    problems = []
    balances = {}
    # refund_requested and subscription_changed grant and take back nothing.
    taken = {}
    for row in db.query("SELECT transaction_id, type, quantity, refunded_quantity FROM events"
                        " WHERE type NOT IN ('refund_requested', 'subscription_changed') ORDER BY event_id"):
        change = -1 if row["type"] == "refunded" else 1
        if row["refunded_quantity"] is not None:
            # A Google quantity-based partial refund takes back part: only the one leaving nothing ends the grant.
            taken[row["transaction_id"]] = taken.get(row["transaction_id"], 0) + row["refunded_quantity"]
            change = -1 if taken[row["transaction_id"]] >= row["quantity"] else 0
        balance = balances.get(row["transaction_id"], 0) + change
        if balance not in (0, 1):
            problems.append(f"{row['transaction_id']}: {row['type']} leaves the balance at {balance}")
        balances[row["transaction_id"]] = balance
    refunds = {row["transaction_id"] for row in db.query("SELECT DISTINCT transaction_id FROM events"
                                                          " WHERE type = 'refunded'")}
    for row in db.query("SELECT transaction_id, state, order_id FROM transactions"):
        balance = balances.get(row["transaction_id"])
        if row["state"] == "delivered" and balance != 1:
            problems.append(f"{row['transaction_id']}: delivered with event balance {balance}")
        if row["state"] == "refunded" and row["order_id"] is not None and (
                balance != 0 or row["transaction_id"] not in refunds):
            problems.append(f"{row['transaction_id']}: refunded after delivery, balance {balance}, no refunded event"
                            if row["transaction_id"] not in refunds else
                            f"{row['transaction_id']}: refunded after delivery with event balance {balance}")
        if row["order_id"] is None and balance is not None:
            problems.append(f"{row['transaction_id']}: never delivered but has events")
    return problems


def verify_jws(api, payload, **fields):
    return api.post_json("/v1/transactions/verify", {"signed_transaction": signed_transaction(payload), **fields})


def deliver_by_verify(api, db, user):
    """A purchase delivered by a JWS verify to a client order of `user`: (payload, order_id)."""
    order = api.create_order(user)
    payload = purchase(app_account_token=order["order_id"])
    assert_verify_answer(verify_jws(api, payload), "delivered")
    assert db.transaction(payload["transactionId"])["state"] == "delivered"
    return payload, order["order_id"]
