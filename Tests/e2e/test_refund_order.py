"""docs/api.md "POST /v1/notifications/apple", its rule on order, for verify: a refund a client shows
(a JWS with `revocationDate`, or a receipt with `cancellation_date`) takes its place by date among the
transaction's refund-state changes, as notifications do. One older than the last change applied
changes nothing and is answered with the state stored: after REFUND_REVERSED, a client posting the
refunded JWS it kept must not take the goods back from a customer Apple charged again."""
from notification_support import (event_invariant_violations, events_of, notification_row, now_ms, purchase,
                                  refunded, send, verify_jws)
from support import PAY_6, assert_verify_answer, new_transaction_id, new_user_id

SECOND = 1000


def timeline():
    """Moments of one purchase's history, in ms, oldest first, all in the recent past."""
    base = now_ms() - 600 * SECOND
    return {"purchase": base, "refund": base + 100 * SECOND, "old_jws": base + 150 * SECOND,
            "reversal": base + 200 * SECOND, "second_refund": base + 300 * SECOND,
            "new_jws": base + 350 * SECOND}


def at(payload, signed_ms):
    """The payload as Apple signs it at `signed_ms`."""
    return dict(payload, signedDate=signed_ms)


def refunded_jws_payload(payload, revoked_ms, signed_ms):
    return at(refunded(payload, revocation_ms=revoked_ms), signed_ms)


def delivered_then_refunded_and_reversed(api, db, user, t):
    """A purchase delivered by a JWS verify to `user`'s order, then REFUND and REFUND_REVERSED
    notifications: (payload, order_id)."""
    order = api.create_order(user)
    payload = purchase(app_account_token=order["order_id"], purchase_ms=t["purchase"],
                       signed_ms=t["purchase"] + SECOND)
    assert_verify_answer(verify_jws(api, payload), "delivered")
    send(api, "REFUND", refunded_jws_payload(payload, t["refund"] - SECOND, t["refund"]), signed_ms=t["refund"])
    send(api, "REFUND_REVERSED", at(payload, t["reversal"]), signed_ms=t["reversal"])
    row = db.transaction(payload["transactionId"])
    assert (row["state"], row["order_id"]) == ("delivered", order["order_id"]), row
    return payload, order["order_id"]


def the_transaction(body):
    [entry] = body["transactions"]
    return entry


def test_an_old_refunded_jws_after_the_reversal_changes_nothing(api, db):
    user, t = new_user_id(), timeline()
    payload, order_id = delivered_then_refunded_and_reversed(api, db, user, t)
    tid = payload["transactionId"]
    before = db.transaction(tid)

    # The JWS the client fetched while the refund stood: signed before the reversal.
    old = refunded_jws_payload(payload, t["refund"] - SECOND, t["old_jws"])
    body = assert_verify_answer(verify_jws(api, old, user_id=user), "already_delivered")

    entry = the_transaction(body)
    assert (entry["state"], entry["order_id"], entry["cancellation_date"]) == (
        "already_delivered", order_id, None), entry
    assert db.transaction(tid) == before, "a stale refund changed the transaction"
    assert db.order(order_id)["status"] == "delivered"
    assert events_of(db, tid) == [
        ("delivered", user, order_id), ("refunded", user, order_id), ("refund_reversed", user, order_id)]
    assert event_invariant_violations(db) == []


def test_a_newer_refunded_jws_refunds_and_takes_its_place_in_the_order(api, db):
    user, t = new_user_id(), timeline()
    payload, order_id = delivered_then_refunded_and_reversed(api, db, user, t)
    tid = payload["transactionId"]

    # Refunded again after the reversal; the client shows it before Apple's notification arrives.
    newer = refunded_jws_payload(payload, t["second_refund"], t["new_jws"])
    body = assert_verify_answer(verify_jws(api, newer, user_id=user), "not_paid")

    assert (the_transaction(body)["state"], the_transaction(body)["order_id"]) == ("refunded", order_id)
    row = db.transaction(tid)
    assert (row["state"], row["order_id"]) == ("refunded", order_id), row
    assert db.order(order_id)["status"] == "refunded"
    taken_back = [("delivered", user, order_id), ("refunded", user, order_id), ("refund_reversed", user, order_id),
                  ("refunded", user, order_id)]
    assert events_of(db, tid) == taken_back

    # Apple's notification of that refund, signed before the JWS: applied in its place, nothing twice.
    refund = send(api, "REFUND", refunded_jws_payload(payload, t["second_refund"], t["second_refund"]),
                  signed_ms=t["second_refund"])
    assert notification_row(db, refund["notificationUUID"])["effect"] == "stale"
    # A reversal signed before the JWS's refund is older news than it: it changes nothing either.
    late = send(api, "REFUND_REVERSED", at(payload, t["new_jws"] - SECOND), signed_ms=t["new_jws"] - SECOND)
    assert notification_row(db, late["notificationUUID"])["effect"] == "stale"
    assert db.transaction(tid)["state"] == "refunded"
    assert events_of(db, tid) == taken_back
    assert event_invariant_violations(db) == []


def test_a_refunded_jws_verified_first_refunds_once(api, db):
    """Delivered, then the refund seen by verify before any notification: refunded with one event;
    Apple's REFUND notification signed before that JWS changes nothing; a reversal after it restores."""
    user, t = new_user_id(), timeline()
    order = api.create_order(user)
    payload = purchase(app_account_token=order["order_id"], purchase_ms=t["purchase"],
                       signed_ms=t["purchase"] + SECOND)
    tid = payload["transactionId"]
    assert_verify_answer(verify_jws(api, payload), "delivered")

    assert_verify_answer(verify_jws(api, refunded_jws_payload(payload, t["refund"], t["old_jws"])), "not_paid")
    assert db.transaction(tid)["state"] == "refunded"
    refund = send(api, "REFUND", refunded_jws_payload(payload, t["refund"], t["refund"]), signed_ms=t["refund"])
    assert notification_row(db, refund["notificationUUID"])["effect"] == "stale"
    send(api, "REFUND_REVERSED", at(payload, t["reversal"]), signed_ms=t["reversal"])

    assert db.transaction(tid)["state"] == "delivered"
    assert events_of(db, tid) == [("delivered", user, order["order_id"]), ("refunded", user, order["order_id"]),
                                  ("refund_reversed", user, order["order_id"])]


def test_an_old_receipt_showing_the_refund_after_the_reversal_changes_nothing(api, db, receipts):
    """A receipt is signed by no one: its refund is dated by its cancellation_date, the earliest moment
    anyone could know of it. The reversal notified since is newer and stands."""
    user, t = new_user_id(), timeline()
    tid = new_transaction_id()
    bought = receipts.purchase(PAY_6, transaction_id=tid, purchase_ms=t["purchase"])
    assert_verify_answer(api.verify(receipts.app_receipt([bought]), user_id=user), "delivered")
    order_id = db.transaction(tid)["order_id"]
    payload = purchase(transaction_id=tid, purchase_ms=t["purchase"], signed_ms=t["purchase"])
    send(api, "REFUND", refunded_jws_payload(payload, t["refund"], t["refund"]), signed_ms=t["refund"])
    send(api, "REFUND_REVERSED", at(payload, t["reversal"]), signed_ms=t["reversal"])
    assert db.transaction(tid)["state"] == "delivered"

    cancelled = receipts.purchase(PAY_6, transaction_id=tid, purchase_ms=t["purchase"], cancellation_ms=t["refund"])
    assert_verify_answer(api.verify(receipts.app_receipt([cancelled]), user_id=user), "already_delivered")

    assert db.transaction(tid)["state"] == "delivered"
    assert events_of(db, tid) == [
        ("delivered", user, order_id), ("refunded", user, order_id), ("refund_reversed", user, order_id)]

    # Refunded again after the reversal: a receipt showing that refund applies.
    again = receipts.purchase(PAY_6, transaction_id=tid, purchase_ms=t["purchase"], cancellation_ms=t["second_refund"])
    assert_verify_answer(api.verify(receipts.app_receipt([again]), user_id=user), "not_paid")
    assert db.transaction(tid)["state"] == "refunded"
    assert [event[0] for event in events_of(db, tid)] == ["delivered", "refunded", "refund_reversed", "refunded"]
