"""The refund-request ledger (docs/events.md "Refund requests", steps 1
and 6, and "The events"): a CONSUMPTION_REQUEST writes its consumption_requests row and a
refund_requested event in the database transaction that stores it; Apple asking again reuses the row
while it is not sent; REFUND and REFUND_DECLINED record the outcome; a partial refund reaches the game
with its share; the game's webhook answer {"consumption_percentage": N} is kept; `iapctl consumption`.

Notifications are signed with the stack's test PKI by the simulator's code (notifications.py) and posted
through nginx to the stack's iap-fcgi. The webhook tests run an iap-fcgi of their own with
IAP_WEBHOOK_URL pointing at the tests' receiver (webhook_receiver.py), as test_webhook.py does.

The stack's iap-fcgi runs without its refund-request sender here (IAP_CONSUMPTION=off, restarted for the
module): the sender takes every due row of the database, whichever iap-fcgi wrote it, and would move a
request of a user without consent to `no_consent` as soon as it is written, so that what the tests read
(the row as the notification's transaction left it) would depend on who ran first.
test_refund_request_sender.py tests the sender.
"""
import os
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import requests

from notification_support import (ROUTE, deliver_by_verify, event_invariant_violations, events_of, notification_row,
                                  now_ms, post, purchase, refunded, send, signed)
from support import PAY_6, new_transaction_id, new_user_id, wait_until, webhook_service
from test_refund_request_sender import add_request
from webhook_receiver import WebhookReceiver

IAPCTL = Path(__file__).resolve().parents[2] / ".build" / "release" / "iapctl"
SECRET = "whsec-e2e-refund-requests-0123"
TWELVE_HOURS_MS = 12 * 3600 * 1000

pytestmark = pytest.mark.outage("iap-fcgi")


@pytest.fixture(scope="module", autouse=True)
def sender_off(stack, api):
    """The stack's iap-fcgi restarted with IAP_CONSUMPTION=off for the module, then as it was."""
    def restart(**extra_env):
        stack("stop iap-fcgi")
        stack("start iap-fcgi", **extra_env)
        wait_until(lambda: api.get("/v1/health").status_code == 200, 30, "iap-fcgi healthy after the restart")

    restart(IAP_CONSUMPTION="off")
    yield
    restart(IAP_CONSUMPTION=os.environ.get("IAP_CONSUMPTION", ""))


def utc(ms):
    """Apple's ms as the naive UTC DATETIME(3) the service stores."""
    return datetime(1970, 1, 1) + timedelta(milliseconds=ms)


def iso(ms):
    return utc(ms).strftime("%Y-%m-%dT%H:%M:%SZ")


def requests_of(db, transaction_id):
    return db.query("SELECT * FROM consumption_requests WHERE transaction_id = %s ORDER BY request_id",
                    transaction_id)


def ask(api, payload, signed_ms=None, reason="UNINTENDED_PURCHASE"):
    """A CONSUMPTION_REQUEST of `payload`'s transaction, accepted; returns the notification."""
    return send(api, "CONSUMPTION_REQUEST", payload, signed_ms=signed_ms or now_ms(),
                consumption_request_reason=reason)


def iapctl_run(*arguments):
    """The release iapctl with the stack's environment: (exit status, stdout, stderr)."""
    result = subprocess.run([str(IAPCTL), *arguments], capture_output=True, text=True, timeout=60)
    return result.returncode, result.stdout, result.stderr


# --- step 1: the request and the game's event ---------------------------------------------------------

def test_a_request_for_a_delivered_transaction_opens_one_pending_row_and_tells_the_game(api, db):
    user = new_user_id()
    payload, order_id = deliver_by_verify(api, db, user)
    before = db.transaction(payload["transactionId"])
    asked_ms = now_ms() - 5000
    notification = ask(api, payload, asked_ms)

    [row] = requests_of(db, payload["transactionId"])
    assert (row["store"], row["original_transaction_id"], row["notification_uuid"], row["environment"]) == (
        "app_store", payload["originalTransactionId"], notification["notificationUUID"], "Production")
    assert (row["user_id"], row["product_id"], row["product_type"], row["reason"]) == (
        user, PAY_6, "Consumable", "UNINTENDED_PURCHASE")
    assert row["requested_at"] == utc(asked_ms) and row["deadline_at"] == utc(asked_ms + TWELVE_HOURS_MS)
    assert (row["status"], row["attempts"], row["outcome"], row["game_consumed_milli"]) == ("pending", 0, None, None)
    assert row["created_at"] is not None
    assert events_of(db, payload["transactionId"]) == [("delivered", user, order_id),
                                                      ("refund_requested", user, order_id)]
    event = db.one("SELECT * FROM events WHERE transaction_id = %s AND type = 'refund_requested'",
                   payload["transactionId"])
    assert row["event_id"] == event["event_id"]
    assert (event["occurred_at"], event["quantity"], event["status"]) == (utc(asked_ms), 1, "pending")
    # The goods do not change, and the notification is stored with no effect on the transaction.
    assert db.transaction(payload["transactionId"]) == before
    assert notification_row(db, notification["notificationUUID"])["effect"] == "stored"


def test_the_same_notification_twice_leaves_one_row_and_one_event(api, db):
    user = new_user_id()
    payload, _ = deliver_by_verify(api, db, user)
    jws, notification = signed("CONSUMPTION_REQUEST", payload, consumption_request_reason="LEGAL")
    for _ in range(2):
        answer = post(api, jws)
        assert answer.status_code == 200 and answer.json()["notification_uuid"] == notification["notificationUUID"]
    assert len(requests_of(db, payload["transactionId"])) == 1
    assert [e[0] for e in events_of(db, payload["transactionId"])] == ["delivered", "refund_requested"]


def test_apple_asking_again_reuses_the_row_until_it_is_sent(api, db):
    user = new_user_id()
    payload, _ = deliver_by_verify(api, db, user)
    first_ms = now_ms() - 60_000
    ask(api, payload, first_ms, reason="UNINTENDED_PURCHASE")
    [first] = requests_of(db, payload["transactionId"])
    # The sender gave up on it (as it does at the deadline); Apple asks again with a new notification.
    db.execute("UPDATE consumption_requests SET status = 'expired', next_attempt_at = %s WHERE request_id = %s",
               utc(first_ms + 1000), first["request_id"])
    again = ask(api, payload, first_ms + 30_000, reason="FULFILLMENT_ISSUE")

    [row] = requests_of(db, payload["transactionId"])
    assert row["request_id"] == first["request_id"] and row["event_id"] == first["event_id"]
    assert (row["notification_uuid"], row["reason"], row["status"], row["next_attempt_at"]) == (
        again["notificationUUID"], "FULFILLMENT_ISSUE", "pending", None)
    assert row["deadline_at"] == utc(first_ms + 30_000 + TWELVE_HOURS_MS)
    assert [e[0] for e in events_of(db, payload["transactionId"])] == ["delivered", "refund_requested"]

    # An ask older than the one on file changes nothing.
    ask(api, payload, first_ms - 1000, reason="OTHER")
    assert requests_of(db, payload["transactionId"]) == [row]

    # Once answered, Apple asking again is a new request, with its own event.
    db.execute("UPDATE consumption_requests SET status = 'sent', sent_at = UTC_TIMESTAMP(3) WHERE request_id = %s",
               row["request_id"])
    ask(api, payload, first_ms + 50_000, reason="OTHER")
    rows = requests_of(db, payload["transactionId"])
    assert [(r["status"], r["reason"]) for r in rows] == [("sent", "FULFILLMENT_ISSUE"), ("pending", "OTHER")]
    assert rows[1]["event_id"] not in (None, row["event_id"])
    assert [e[0] for e in events_of(db, payload["transactionId"])] == [
        "delivered", "refund_requested", "refund_requested"]


def test_a_request_for_a_transaction_never_delivered_here_has_no_user_and_no_event(api, db):
    never_seen = purchase()
    ask(api, never_seen, reason=None)
    [row] = requests_of(db, never_seen["transactionId"])
    assert (row["user_id"], row["event_id"], row["reason"], row["status"]) == (None, None, None, "pending")
    assert db.transaction(never_seen["transactionId"]) is None, "a request stores no transaction"
    assert events_of(db, never_seen["transactionId"]) == []

    unclaimed = purchase()
    send(api, "ONE_TIME_CHARGE", unclaimed)
    assert db.transaction(unclaimed["transactionId"])["state"] == "unclaimed"
    ask(api, unclaimed)
    [row] = requests_of(db, unclaimed["transactionId"])
    assert (row["user_id"], row["event_id"]) == (None, None)
    assert events_of(db, unclaimed["transactionId"]) == []


def test_the_simulator_sends_a_consumption_request_with_its_reason(api, db, simulator):
    user = new_user_id()
    payload, _ = deliver_by_verify(api, db, user)
    sent = requests.post(f"{simulator.base_url}/notifications/send", timeout=10, json={
        "url": api.url(ROUTE), "notification_type": "CONSUMPTION_REQUEST", "retry_intervals_s": [],
        "consumption_request_reason": "UNSATISFIED_WITH_PURCHASE",
        "transaction": {"product_id": PAY_6, "transaction_id": payload["transactionId"],
                        "app_account_token": payload["appAccountToken"]}}).json()
    wait_until(lambda: notification_row(db, sent["notification_uuid"]), 15, "the simulator's CONSUMPTION_REQUEST")
    [row] = requests_of(db, payload["transactionId"])
    assert (row["notification_uuid"], row["reason"], row["user_id"]) == (
        sent["notification_uuid"], "UNSATISFIED_WITH_PURCHASE", user)


# --- step 4: Apple's decision --------------------------------------------------------------------------

@pytest.mark.parametrize("notification_type", ["REFUND", "REVOKE"])
def test_a_refund_after_the_request_records_refunded_and_takes_the_goods_back(api, db, notification_type):
    user = new_user_id()
    payload, order_id = deliver_by_verify(api, db, user)
    asked_ms = now_ms() - 60_000
    ask(api, payload, asked_ms)
    decided_ms = asked_ms + 30_000
    send(api, notification_type, refunded(payload, decided_ms), signed_ms=decided_ms)

    [row] = requests_of(db, payload["transactionId"])
    assert (row["outcome"], row["outcome_at"]) == ("refunded", utc(decided_ms))
    # What a refund did before is intact: refunded, its order too, and the goods taken back.
    assert db.transaction(payload["transactionId"])["state"] == "refunded"
    assert db.order(order_id)["status"] == "refunded"
    assert events_of(db, payload["transactionId"]) == [
        ("delivered", user, order_id), ("refund_requested", user, order_id), ("refunded", user, order_id)]


def test_refund_declined_records_declined_and_changes_nothing_else(api, db):
    user = new_user_id()
    payload, order_id = deliver_by_verify(api, db, user)
    asked_ms = now_ms() - 60_000
    ask(api, payload, asked_ms)
    before = db.transaction(payload["transactionId"])
    declined = send(api, "REFUND_DECLINED", payload, signed_ms=asked_ms + 20_000)

    [row] = requests_of(db, payload["transactionId"])
    assert (row["outcome"], row["outcome_at"], row["status"]) == ("declined", utc(asked_ms + 20_000), "pending")
    assert db.transaction(payload["transactionId"]) == before
    assert db.order(order_id)["status"] == "delivered"
    assert notification_row(db, declined["notificationUUID"])["effect"] == "stored"
    assert [e[0] for e in events_of(db, payload["transactionId"])] == ["delivered", "refund_requested"]

    # A refund decided later wins; an older decision arriving after it does not override it.
    send(api, "REFUND", refunded(payload, asked_ms + 40_000), signed_ms=asked_ms + 40_000)
    send(api, "REFUND_DECLINED", payload, signed_ms=asked_ms + 30_000)
    [row] = requests_of(db, payload["transactionId"])
    assert (row["outcome"], row["outcome_at"]) == ("refunded", utc(asked_ms + 40_000))


def test_apple_asking_again_after_its_decision_is_a_new_request(api, db):
    """A decided request is never answered (the sender closes it), so asking again cannot reuse it."""
    user = new_user_id()
    payload, order_id = deliver_by_verify(api, db, user)
    asked_ms = now_ms() - 60_000
    ask(api, payload, asked_ms, reason="UNINTENDED_PURCHASE")
    send(api, "REFUND_DECLINED", payload, signed_ms=asked_ms + 20_000)
    [decided] = requests_of(db, payload["transactionId"])

    ask(api, payload, asked_ms + 10_000, reason="LEGAL")   # signed before the decision: part of that request
    assert requests_of(db, payload["transactionId"]) == [decided]
    ask(api, payload, asked_ms + 30_000, reason="OTHER")
    first, second = requests_of(db, payload["transactionId"])
    assert first == decided and (first["outcome"], first["reason"]) == ("declined", "UNINTENDED_PURCHASE")
    assert (second["status"], second["outcome"], second["reason"], second["user_id"]) == (
        "pending", None, "OTHER", user)
    assert second["event_id"] not in (None, first["event_id"])
    assert events_of(db, payload["transactionId"]) == [
        ("delivered", user, order_id), ("refund_requested", user, order_id), ("refund_requested", user, order_id)]


def test_a_decision_without_a_request_writes_no_row(api, db):
    user = new_user_id()
    payload, _ = deliver_by_verify(api, db, user)
    send(api, "REFUND_DECLINED", payload)
    send(api, "REFUND", refunded(payload))
    assert requests_of(db, payload["transactionId"]) == []


# --- partial refunds and the game's answer, through the webhook ----------------------------------------

@pytest.fixture(scope="module")
def receiver(run_dir):
    with WebhookReceiver(SECRET, run_dir / "certs") as receiver:
        yield receiver


@pytest.fixture(scope="module")
def webhook_log(receiver, db, tmp_path_factory):
    """An iap-fcgi of the module's own pushing events to `receiver`; yields its log's path."""
    with webhook_service(db, tmp_path_factory.mktemp("refund-requests-webhook"), receiver.url, SECRET) as log:
        yield log


@pytest.fixture(autouse=True)
def healthy_receiver(request):
    if "receiver" in request.fixturenames:
        request.getfixturevalue("receiver").heal()
    yield


def event_of(db, transaction_id, event_type):
    return db.one("SELECT * FROM events WHERE transaction_id = %s AND type = %s", transaction_id, event_type)


def posted_once(db, receiver, transaction_id, event_type):
    """The event's row once the webhook got its 2xx, and the one POST of it."""
    event_id = event_of(db, transaction_id, event_type)["event_id"]
    wait_until(lambda: db.scalar("SELECT status FROM events WHERE event_id = %s", event_id) == "sent", 30,
               f"{event_type} event {event_id} sent")
    [delivery] = receiver.of([event_id])
    assert delivery.signature_ok and delivery.acknowledged
    return db.one("SELECT * FROM events WHERE event_id = %s", event_id), delivery.body


def test_a_prorated_refund_reaches_the_game_with_its_share(api, db, receiver, webhook_log):
    user = new_user_id()
    payload, order_id = deliver_by_verify(api, db, user)
    revoked_ms = now_ms() - 10_000
    send(api, "REFUND", refunded(payload, revoked_ms, "REFUND_PRORATED", 40000, 1))

    row = db.transaction(payload["transactionId"])
    assert (row["state"], row["revocation_type"], row["revocation_percentage"], row["revocation_reason"]) == (
        "refunded", "REFUND_PRORATED", 40000, 1)
    event, body = posted_once(db, receiver, payload["transactionId"], "refunded")
    assert (event["user_id"], event["order_id"]) == (user, order_id)
    assert body["type"] == "refunded" and "refund_request" not in body
    assert body["transaction"]["state"] == "refunded"
    assert (body["transaction"]["revocation_type"], body["transaction"]["revocation_percentage"],
            body["transaction"]["revocation_reason"]) == ("REFUND_PRORATED", 40000, 1)


def test_the_games_consumption_answer_is_kept_with_the_request(api, db, receiver, webhook_log):
    receiver.behave(answer_body=b'{"consumption_percentage": 40000}')
    user = new_user_id()
    payload, order_id = deliver_by_verify(api, db, user)
    asked_ms = now_ms() - 5000
    ask(api, payload, asked_ms, reason="UNINTENDED_PURCHASE")

    event, body = posted_once(db, receiver, payload["transactionId"], "refund_requested")
    assert list(body) == ["event_id", "type", "store", "occurred_at", "environment", "transaction", "order",
                          "refund_request"]
    assert (body["event_id"], body["type"], body["occurred_at"]) == (event["event_id"], "refund_requested", iso(asked_ms))
    assert body["refund_request"] == {"reason": "UNINTENDED_PURCHASE", "deadline_at": iso(asked_ms + TWELVE_HOURS_MS)}
    assert body["transaction"]["state"] == "delivered" and body["transaction"]["revocation_type"] is None
    assert body["transaction"]["revocation_percentage"] is None and body["transaction"]["revocation_reason"] is None
    assert (body["order"]["order_id"], body["order"]["user_id"]) == (order_id, user)
    # Marked sent in the database transaction that keeps the answer: both are there at once.
    [row] = requests_of(db, payload["transactionId"])
    assert row["game_consumed_milli"] == 40000


def test_an_answer_that_is_not_a_consumption_is_ignored_and_logged(api, db, receiver, webhook_log):
    receiver.behave(answer_body=b'{"consumption_percentage": 100001}')
    user = new_user_id()
    payload, _ = deliver_by_verify(api, db, user)
    ask(api, payload)
    event, _ = posted_once(db, receiver, payload["transactionId"], "refund_requested")
    [row] = requests_of(db, payload["transactionId"])
    assert row["game_consumed_milli"] is None
    wait_until(lambda: f"event {event['event_id']} (refund_requested): the game's answer is ignored"
               in webhook_log.read_text(errors="replace"), 10, "the ignored answer logged")


# --- iapctl consumption --------------------------------------------------------------------------------

def test_iapctl_consent_and_withdraw(db, iapctl):
    user = new_user_id()
    assert iapctl("consumption", "consent", user).split() == [user, "consented"]
    row = db.one("SELECT * FROM consumption_consent WHERE user_id = %s", user)
    assert row["consented_at"] is not None and row["withdrawn_at"] is None

    assert iapctl("consumption", "consent", user, "--withdraw").split() == [user, "withdrawn"]
    row = db.one("SELECT * FROM consumption_consent WHERE user_id = %s", user)
    assert row["withdrawn_at"] is not None and row["withdrawn_at"] >= row["consented_at"]

    assert iapctl("consumption", "consent", user).split() == [user, "consented"]
    assert db.one("SELECT withdrawn_at FROM consumption_consent WHERE user_id = %s", user)["withdrawn_at"] is None

    stranger = new_user_id()
    assert iapctl("consumption", "consent", stranger, "--withdraw").strip() == f"{stranger}\tno consent recorded"
    assert db.one("SELECT * FROM consumption_consent WHERE user_id = %s", stranger) is None


def test_iapctl_set_records_consumption_and_refuses_a_bad_value(api, db, iapctl):
    payload, _ = deliver_by_verify(api, db, new_user_id())
    tid = payload["transactionId"]
    assert iapctl("consumption", "set", tid, "40000").split() == [tid, "40000"]
    assert iapctl("consumption", "set", tid, "100000").split() == [tid, "100000"]
    assert db.one("SELECT consumed_milli FROM consumption WHERE transaction_id = %s", tid)["consumed_milli"] == 100000

    for bad in ("100001", "-1", "4e4", "half"):
        status, _, error = iapctl_run("consumption", "set", "--", tid, bad)   # "--": -1 is not an option
        assert status != 0 and "MILLI is an integer from 0 (nothing used) to 100000 (all of it)" in error, (bad, error)
    assert db.one("SELECT consumed_milli FROM consumption WHERE transaction_id = %s", tid)["consumed_milli"] == 100000

    status, _, error = iapctl_run("consumption", "set", "9999000000000001", "0")
    assert status == 1 and "no transaction 9999000000000001" in error


def test_iapctl_list_and_send(api, db, iapctl):
    user = new_user_id()
    payload, _ = deliver_by_verify(api, db, user)
    tid = payload["transactionId"]
    ask(api, payload, reason="LEGAL")
    [row] = requests_of(db, tid)
    db.execute("UPDATE consumption_requests SET next_attempt_at = UTC_TIMESTAMP(3) + INTERVAL 1 HOUR"
               " WHERE request_id = %s", row["request_id"])

    listed = [line.split("\t") for line in iapctl("consumption", "list", "--pending", "--limit", "10000").splitlines()]
    mine = [line for line in listed if line[0] == str(row["request_id"])]
    assert mine and mine[0][1:6] == [tid, user, PAY_6, "LEGAL", "pending"], mine

    assert iapctl("consumption", "send", tid).strip() == f"{tid}\tpending, due now"
    row = db.one("SELECT *, UTC_TIMESTAMP(3) AS db_now FROM consumption_requests WHERE request_id = %s",
                 row["request_id"])
    assert row["status"] == "pending" and row["next_attempt_at"] <= row["db_now"]

    db.execute("UPDATE consumption_requests SET status = 'sent' WHERE request_id = %s", row["request_id"])
    status, _, error = iapctl_run("consumption", "send", tid)
    assert status == 1 and f"the refund request of transaction {tid} is sent" in error
    assert all(line.split("\t")[0] != str(row["request_id"])
               for line in iapctl("consumption", "list", "--pending", "--limit", "10000").splitlines())
    assert any(line.split("\t")[0] == str(row["request_id"]) for line in iapctl("consumption", "list").splitlines())

    status, _, error = iapctl_run("consumption", "send", "9999000000000002")
    assert status == 1 and "no refund request for transaction 9999000000000002" in error


def request_in(db, status, deadline_seconds, held_by_a_sender=False):
    """A request with `status` and its deadline that far away. It is written leased, so that the stack's
    sender never sees it half made, and given back in one statement unless `held_by_a_sender` (as if
    another instance's sender were sending it). Returns (transaction id, row)."""
    tid = new_transaction_id()
    request_id = add_request(db, tid, new_user_id(), PAY_6, deadline_seconds=deadline_seconds, leased_seconds=3600)
    db.execute("UPDATE consumption_requests SET status = %s, attempts = 1, last_error = 'HTTP 400 errorCode 4000000',"
               " lease_expires_at = IF(%s, lease_expires_at, NULL) WHERE request_id = %s",
               status, int(held_by_a_sender), request_id)
    return tid, db.one("SELECT * FROM consumption_requests WHERE request_id = %s", request_id)


def test_iapctl_send_queues_as_the_consoles_send_now(db, iapctl):
    """`consumption send` runs the console's Send now (RefundAnswerNow): a request Apple refused is sent
    again while its deadline allows; one past its deadline, or one a sender holds, is left as it is."""
    refused, _ = request_in(db, "failed", deadline_seconds=3600)
    assert iapctl("consumption", "send", refused).strip() == f"{refused}\tpending, due now"
    # Queued for the sender (off in this module, so the row stays as the command left it): pending, due now.
    row = db.one("SELECT status, next_attempt_at <= UTC_TIMESTAMP(3) AS due, lease_expires_at"
                 " FROM consumption_requests WHERE transaction_id = %s", refused)
    assert row == {"status": "pending", "due": 1, "lease_expires_at": None}, row

    late, before = request_in(db, "failed", deadline_seconds=-1)
    status, _, error = iapctl_run("consumption", "send", late)
    assert status == 1 and f"the refund request of transaction {late} is failed: nothing to send" in error, error
    assert requests_of(db, late) == [before]

    held, before = request_in(db, "pending", deadline_seconds=3600, held_by_a_sender=True)
    try:
        status, _, error = iapctl_run("consumption", "send", held)
        assert status == 1 and f"the refund request of transaction {held} is pending: nothing to send" in error, error
        assert requests_of(db, held) == [before]
    finally:
        # The lease belongs to no real sender: ended, so that no later module waits an hour for it.
        db.execute("UPDATE consumption_requests SET lease_expires_at = NULL WHERE transaction_id = %s", held)


def test_event_invariants_hold_with_refund_requests(db):
    """Runs after the tests above: refund_requested events grant and take back nothing."""
    assert db.scalar("SELECT COUNT(*) FROM events WHERE type = 'refund_requested'") > 0
    assert event_invariant_violations(db) == []
