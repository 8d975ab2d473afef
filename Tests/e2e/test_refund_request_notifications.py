"""Refund requests as Apple's other notifications shape them, with the stack's sender on (docs/events.md "Refund
requests"):

- a request Apple has decided (a REFUND, REVOKE or REFUND_DECLINED recorded its `outcome`) is never
  answered: no PUT once the decision is stored, even when it arrives while a sender holds the row or
  during a PUT that fails; the request ends `expired` (no answer of ours can count any more) with its
  outcome, and neither the sender's retries nor `iapctl consumption send` send it again;
- a request for a purchase never delivered here is the user's whose order its `appAccountToken` names
  (as a delivery binds it), so it is answered with that user's consent: UNDELIVERED_OTHER, and GRANT_FULL
  under policy `auto`.

Notifications are signed with the stack's test PKI and posted through nginx (notification_support); the
interleavings are forced: a lease held as another instance's sender holds one, or the simulator holding
its answer to the PUT. What Apple received is read from the simulator.
"""
import pytest

from notification_support import now_ms, post, purchase, refunded, send, signed
from support import PAY_6, new_user_id, wait_until
from test_refund_request_sender import add_product, add_request, apple, body, consent, puts, row, settled
from test_refund_requests_ledger import iapctl_run


def consenting_user(db):
    user = new_user_id()
    consent(db, user)
    return user


def decision(decision_type, payload, decided_ms):
    """(signedPayload, notification) of Apple's decision on `payload`'s refund, signed at `decided_ms`."""
    if decision_type == "REFUND_DECLINED":
        return signed("REFUND_DECLINED", payload, signed_ms=decided_ms)
    return signed(decision_type, refunded(payload, decided_ms), signed_ms=decided_ms)


def accepted(api, jws):
    answer = post(api, jws)
    assert answer.status_code == 200 and answer.json()["status"] == "accepted", answer.text


# --- item: a decided request is not answered -----------------------------------------------------------

@pytest.mark.parametrize("decision_type, outcome", [
    ("REFUND", "refunded"), ("REVOKE", "refunded"), ("REFUND_DECLINED", "declined")])
def test_a_request_decided_while_another_sender_holds_it_is_closed_unsent(api, db, simulator, decision_type, outcome):
    """Another instance's sender holds the row (then dies) while Apple's decision is stored: once its lease
    ends, the request is closed without a PUT."""
    product_id = add_product(db, "grant_full")
    payload = purchase(product_id)
    tid = payload["transactionId"]
    add_request(db, tid, consenting_user(db), product_id, leased_seconds=3600)
    accepted(api, decision(decision_type, payload, now_ms() + 1000)[0])
    held = row(db, tid)
    assert (held["status"], held["outcome"]) == ("pending", outcome)

    db.execute("UPDATE consumption_requests SET lease_expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND"
               " WHERE transaction_id = %s", tid)   # the other instance died: its lease ends
    closed = settled(db, tid)
    assert (closed["status"], closed["attempts"], closed["outcome"], closed["last_error"]) == (
        "expired", 0, outcome, f"Apple decided ({outcome}) before a PUT")
    assert (closed["sent_body"], closed["lease_expires_at"], closed["next_attempt_at"]) == (None, None, None)
    assert puts(simulator, tid) == []


def test_a_decision_that_arrives_during_a_failing_put_stops_its_retries(api, db, simulator):
    """The simulator holds its 500 for 1.5 s (under the stack's 2 s limit): the REFUND is stored while the
    PUT waits. Without the decision the request would be PUT again after the 5 s backoff and be sent."""
    apple(simulator, fault=500, fail_next=1, latency_ms=1500)
    product_id = add_product(db, "grant_full")
    payload = purchase(product_id)
    tid = payload["transactionId"]
    add_request(db, tid, consenting_user(db), product_id)
    jws, _ = decision("REFUND", payload, now_ms() + 1000)   # signed now, so that posting it is quick
    wait_until(lambda: puts(simulator, tid), 30, "the PUT reaching the simulator")
    accepted(api, jws)

    closed = settled(db, tid)
    assert (closed["status"], closed["attempts"], closed["outcome"], closed["last_error"]) == (
        "expired", 1, "refunded", "HTTP 500 errorCode 5000000")
    assert [put["status"] for put in puts(simulator, tid)] == [500]


def test_send_now_leaves_a_request_apple_decided_alone(api, db, simulator):
    """A request Apple refused (`failed`) may be sent again with `iapctl consumption send`, unless Apple has
    decided it since."""
    product_id = add_product(db, "grant_full")
    payload = purchase(product_id)
    tid = payload["transactionId"]
    request_id = add_request(db, tid, consenting_user(db), product_id, leased_seconds=3600)
    db.execute("UPDATE consumption_requests SET status = 'failed', attempts = 1, last_error = 'HTTP 400 errorCode"
               " 4000000', lease_expires_at = NULL WHERE request_id = %s", request_id)
    accepted(api, decision("REFUND_DECLINED", payload, now_ms() + 1000)[0])
    before = row(db, tid)
    assert (before["status"], before["outcome"]) == ("failed", "declined")

    status, _, error = iapctl_run("consumption", "send", tid)
    assert status == 1 and f"the refund request of transaction {tid} is failed: nothing to send" in error, error
    assert row(db, tid) == before
    assert puts(simulator, tid) == []


# --- item: a purchase never delivered here, found through its appAccountToken --------------------------

def test_a_request_never_delivered_here_is_answered_for_the_user_its_token_names(api, db, simulator):
    product_id = add_product(db, "auto")
    user = consenting_user(db)
    order = api.create_order(user, PAY_6)   # the order the app passed to StoreKit as appAccountToken
    payload = purchase(product_id, app_account_token=order["order_id"])
    tid = payload["transactionId"]
    send(api, "CONSUMPTION_REQUEST", payload, consumption_request_reason="FULFILLMENT_ISSUE")

    answered = settled(db, tid)
    assert (answered["user_id"], answered["status"], answered["attempts"]) == (user, "sent", 1)
    assert answered["refund_preference_sent"] == "GRANT_FULL"
    [put] = puts(simulator, tid)
    assert (put["status"], put["body"]) == (202, body(0, "GRANT_FULL", delivered=False))
    # Nothing was delivered by asking: no transaction stored, the order still open, no event.
    assert db.transaction(tid) is None
    assert db.order(order["order_id"])["status"] == "created"
    assert db.scalar("SELECT COUNT(*) FROM events WHERE transaction_id = %s", tid) == 0


def test_a_token_that_names_no_order_leaves_the_request_without_a_user(api, db, simulator):
    product_id = add_product(db, "auto")
    payload = purchase(product_id, app_account_token="5d3f0c55-9e0a-4b8e-8f51-4f0a3c1e2b7d")
    tid = payload["transactionId"]
    send(api, "CONSUMPTION_REQUEST", payload)
    answered = settled(db, tid)
    assert (answered["user_id"], answered["status"]) == (None, "no_consent")
    assert puts(simulator, tid) == []
