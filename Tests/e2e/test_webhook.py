"""The webhook dispatcher (docs/events.md "Push: the webhook"): iap-fcgi POSTs each
`events` row to IAP_WEBHOOK_URL, signed, at least once, one user's events in
order, with backoff for 72 hours, and never two processes the same event at once.

The stack's own iap-fcgi runs without a webhook, so the rest of the suite is
unaffected. These tests run iap-fcgi processes of their own (their own FastCGI
sockets, the stack's database) with IAP_WEBHOOK_URL pointing at a receiver of the
tests' own (webhook_receiver.py); deliveries still go through nginx and the stack's
iap-fcgi, which writes the events the dispatchers pick up from the database.
Time is simulated by moving `created_at`, `next_attempt_at` and the end of a lost lease in the database.
"""
import subprocess
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pymysql
import pytest

import game_events
from fastcgi_client import IAP_FCGI, start_service, start_up_refusal, stop_service, wait_until_answering
from support import (PAY_6, assert_verify_answer, lock_waiting_queries, new_transaction_id, new_user_id,
                     placeholders, wait_until)
from webhook_receiver import NEW_HEADS_PENDING, WebhookReceiver

SECRET = "whsec-e2e-0123456789abcdef"
LEASE_SECONDS = 30            # WebhookDispatcher.leaseMs
BODY_MEMBERS = ["event_id", "type", "store", "occurred_at", "environment", "transaction", "order"]
# The member a type adds after the others.
TYPE_MEMBERS = {"refund_requested": ["refund_request"], "subscription_changed": ["subscription"]}
TRANSACTION_MEMBERS = ["transaction_id", "original_transaction_id", "product_id", "quantity", "purchase_date", "state",
                       "revocation_reason", "revocation_type", "revocation_percentage", "refunded_quantity"]
ORDER_MEMBERS = ["order_id", "user_id", "product_id", "price", "currency", "status"]


class WebhookService:
    """An iap-fcgi with the webhook on, on a FastCGI socket of its own."""

    def __init__(self, directory, receiver_url, name):
        self.socket = str(directory / f"{name}.sock")
        self.log = directory / f"{name}.log"
        self.receiver_url = receiver_url
        self.process = None

    def start(self):
        self.process = start_service(self.log, IAP_LISTEN=self.socket, IAP_WEBHOOK_URL=self.receiver_url,
                                     IAP_WEBHOOK_SECRET=SECRET)
        wait_until_answering(self.socket, self.process, self.log)
        return self

    def kill(self):
        self.process.kill()
        self.process.wait(10)

    def stop(self):
        return stop_service(self.process)

    def log_text(self):
        return self.log.read_text(errors="replace")


@pytest.fixture(scope="module")
def receiver(run_dir):
    with WebhookReceiver(SECRET, run_dir / "certs") as receiver:
        yield receiver


@pytest.fixture(scope="module")
def dispatcher(receiver, db, tmp_path_factory):
    """One webhook iap-fcgi for the module. The events earlier tests left pending were pulled (the
    stack runs without a webhook): they are marked sent first, as README tells an operator who turns
    the webhook on after pulling (one user of a load test holds thousands, which one user's order
    would send one at a time)."""
    db.execute("UPDATE events SET status = 'sent', sent_at = UTC_TIMESTAMP(3) WHERE status = 'pending'")
    service = WebhookService(tmp_path_factory.mktemp("webhook"), receiver.url, "webhook-a").start()
    try:
        wait_until(lambda: db.scalar(NEW_HEADS_PENDING) == 0, 180, "the events earlier tests left sent")
        yield service
    finally:
        if service.process.poll() is None:
            assert service.stop() == 0, service.log_text()[-3000:]
    assert SECRET not in service.log_text()


@pytest.fixture(autouse=True)
def healthy_receiver(receiver):
    receiver.heal()
    yield
    receiver.heal()


# --- helpers ---------------------------------------------------------------------------------

def deliver(api, receipts, user_id, count=1, product_id=PAY_6):
    """A receipt with `count` new purchases, delivered to `user_id`; returns their transaction ids."""
    bought = [receipts.purchase(product_id, transaction_id=new_transaction_id()) for _ in range(count)]
    assert_verify_answer(api.verify(receipts.app_receipt(bought), user_id=user_id), "delivered")
    return [purchase["transaction_id"] for purchase in bought]


def events_of(db, *user_ids):
    return db.query(f"SELECT * FROM events WHERE user_id IN ({placeholders(user_ids)}) ORDER BY event_id", *user_ids)


def event(db, event_id):
    return db.one("SELECT * FROM events WHERE event_id = %s", event_id)


def wait_status(db, event_ids, status, timeout=15):
    ids = [int(i) for i in event_ids]
    wait_until(lambda: db.scalar(f"SELECT COUNT(*) FROM events WHERE status = %s AND event_id IN ({placeholders(ids)})",
                                 status, *ids) == len(ids), timeout, f"events {ids} {status}")


def wait_attempts(db, event_id, attempts, timeout=15):
    wait_until(lambda: event(db, event_id)["attempts"] >= attempts, timeout,
               f"event {event_id} POSTed {attempts} times")


def database_now(db):
    return db.scalar("SELECT UTC_TIMESTAMP(3)")


def failure_recorded(db, event_id, attempts):
    """The event's row with the database's clock read in the same statement (`db_now`), once its
    `attempts`-th POST is recorded and no lease is held; None before."""
    row = db.one("SELECT e.*, UTC_TIMESTAMP(3) AS db_now FROM events e WHERE event_id = %s", event_id)
    return row if row["attempts"] == attempts and row["lease_expires_at"] is None else None


def wall_clock_ms(seconds):
    """time.time() as the naive UTC DATETIME(3) the service writes for that moment (milliseconds cut off)."""
    moment = datetime.fromtimestamp(seconds, timezone.utc).replace(tzinfo=None)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def thread_names(pid):
    """The names of a process's threads (iap-fcgi names each: accept, apple-client, webhook, ...)."""
    names = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            names.add((task / "comm").read_text().strip())
        except FileNotFoundError:   # the thread ended meanwhile
            pass
    return names


def move_unleased(db, sql, event_ids, *args):
    """Runs `UPDATE events SET <sql> WHERE ...` on the events no dispatcher holds at the moment (a POST
    under way would write its result over the change), retrying until every one was changed."""
    ids = [int(i) for i in event_ids]

    def moved():
        return db.execute(f"UPDATE events SET {sql} WHERE event_id IN ({placeholders(ids)}) AND status = 'pending'"
                          " AND (lease_expires_at IS NULL OR lease_expires_at < UTC_TIMESTAMP(3))", *args, *ids)
    changed = moved()
    while changed < len(ids):   # some were leased: do them all again once free (the change is idempotent)
        time.sleep(0.05)
        changed = moved()


def end_leases_taken_before(db, event_ids, moment):
    """The leases of these events taken before `moment` (a database time) end now instead of LEASE_SECONDS after
    they were taken: time passing for the leases a dispatcher lost, without waiting for it. A lease taken since
    (a POST that may be under way) is left as it is."""
    ids = [int(i) for i in event_ids]
    db.execute(f"UPDATE events SET lease_expires_at = UTC_TIMESTAMP(3) WHERE event_id IN ({placeholders(ids)})"
               " AND lease_expires_at <= %s + INTERVAL %s SECOND", *ids, moment, LEASE_SECONDS)


def iso(value):
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


def assert_documented_post(delivery, db, row):
    """The POST of `row` as docs/events.md documents it: headers, signature, and a body that matches the tables."""
    assert delivery.signature_ok, delivery.headers.get("x-iap-signature")
    assert delivery.event_id == str(row["event_id"])
    assert delivery.headers["content-type"] == "application/json"
    body = delivery.body
    assert list(body) == BODY_MEMBERS + TYPE_MEMBERS.get(row["type"], []), body
    assert list(body["transaction"]) == TRANSACTION_MEMBERS and list(body["order"]) == ORDER_MEMBERS, body
    transaction = db.transaction(row["transaction_id"])
    order = db.order(row["order_id"])
    assert body["event_id"] == row["event_id"] and body["type"] == row["type"] and body["store"] == row["store"]
    assert body["occurred_at"] == iso(row["occurred_at"]) and body["environment"] == row["environment"]
    assert body["transaction"] == {
        "transaction_id": row["transaction_id"], "original_transaction_id": row["original_transaction_id"],
        "product_id": row["product_id"], "quantity": row["quantity"],
        "purchase_date": iso(transaction["purchase_date"]), "state": transaction["state"],
        "revocation_reason": transaction["revocation_reason"], "revocation_type": transaction["revocation_type"],
        "revocation_percentage": transaction["revocation_percentage"], "refunded_quantity": row["refunded_quantity"]}
    if row["type"] == "subscription_changed":
        assert body["subscription"] == {
            "status": row["subscription_status"], "expires_at": iso(row["expires_at"]),
            "auto_renew": None if row["auto_renew"] is None else bool(row["auto_renew"]),
            "original_transaction_id": row["original_transaction_id"]}, body
    assert body["order"] == {
        "order_id": order["order_id"], "user_id": row["user_id"], "product_id": order["product_id"],
        "price": str(order["price"]), "currency": order["currency"], "status": order["status"]}


# --- the tests -------------------------------------------------------------------------------

def test_a_delivery_is_posted_once_signed_with_the_documented_body(api, db, receipts, receiver, dispatcher):
    user_id = new_user_id()
    [tid] = deliver(api, receipts, user_id)
    [row] = events_of(db, user_id)
    assert row["type"] == "delivered" and row["transaction_id"] == tid
    wait_status(db, [row["event_id"]], "sent")

    [delivery] = receiver.of([row["event_id"]])
    row = event(db, row["event_id"])
    assert_documented_post(delivery, db, row)
    assert delivery.body["transaction"]["state"] == "delivered" and delivery.body["order"]["status"] == "delivered"
    assert row["attempts"] == 1 and row["last_error"] is None and row["lease_expires_at"] is None
    assert row["next_attempt_at"] is None and row["sent_at"] is not None
    # Picked up promptly: an idle dispatcher looks every 200 ms.
    assert (row["sent_at"] - row["created_at"]).total_seconds() < 2, row


def test_a_refund_follows_its_delivery_in_order(api, db, receipts, receiver, dispatcher):
    user_id = new_user_id()
    bought = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    assert_verify_answer(api.verify(receipts.app_receipt([bought]), user_id=user_id), "delivered")
    refunded = dict(bought, cancellation_ms=bought["purchase_ms"] + 60_000)
    api.verify(receipts.app_receipt([refunded]), user_id=user_id)
    rows = events_of(db, user_id)
    assert [r["type"] for r in rows] == ["delivered", "refunded"], rows
    wait_status(db, [r["event_id"] for r in rows], "sent")

    deliveries = receiver.of([r["event_id"] for r in rows])
    assert [d.event_id for d in deliveries] == [str(r["event_id"]) for r in rows]
    assert deliveries[0].answered <= deliveries[1].started
    assert_documented_post(deliveries[1], db, event(db, rows[1]["event_id"]))
    assert deliveries[1].body["transaction"]["state"] == "refunded"


def test_a_google_purchase_and_its_partial_refund_say_their_store_and_how_many(api, db, google, receiver, dispatcher):
    """The body of a Google Play purchase's events says google_play, and a quantity-based partial refund's
    `refunded` event carries refunded_quantity: the game takes back 2 of the 5, not all of them. (The partial
    refund's event is written here as a voided purchase would write it.)"""
    user_id = new_user_id()
    bought = game_events.deliver_on_google_play(api, google, user_id, quantity=5)
    [delivered] = events_of(db, user_id)
    refunded_id = game_events.refund_partly(db, delivered, 2)
    wait_status(db, [delivered["event_id"], refunded_id], "sent")

    first, second = receiver.of([delivered["event_id"], refunded_id])
    assert_documented_post(first, db, event(db, delivered["event_id"]))
    assert_documented_post(second, db, event(db, refunded_id))
    assert (first.body["store"], first.body["transaction"]["transaction_id"], first.body["transaction"]["quantity"],
            first.body["transaction"]["refunded_quantity"]) == ("google_play", bought["order_id"], 5, None), first.body
    assert (second.body["type"], second.body["store"], second.body["transaction"]["quantity"],
            second.body["transaction"]["refunded_quantity"]) == ("refunded", "google_play", 5, 2), second.body
    assert second.body["transaction"]["revocation_percentage"] is None


def test_a_google_refund_review_carries_its_reason_and_deadline(api, db, google, receiver, dispatcher):
    """A pendingRefundReviewNotification's `refund_requested` event carries the request as Apple's does
    (its consumption_requests row and event written here as the notification writes them; the row is not
    pending, so that no sender answers Google)."""
    user_id = new_user_id()
    bought = game_events.deliver_on_google_play(api, google, user_id, quantity=1)
    [delivered] = events_of(db, user_id)
    asked_id = game_events.insert_event_like(db, delivered["event_id"], "refund_requested")
    db.execute("INSERT INTO consumption_requests (store, transaction_id, original_transaction_id, google_message_id,"
               " pending_refund_token, order_id, environment, user_id, product_id, reason, requested_at, deadline_at,"
               " status, event_id, created_at) VALUES ('google_play', %s, %s, %s, 'refund-token-e2e', %s, 'Production',"
               " %s, %s, 'OTHER', '2026-11-28 08:00:00.000', '2026-11-29 08:00:00.000', 'no_consent', %s,"
               " UTC_TIMESTAMP(3))", bought["order_id"], bought["order_id"], f"m-{asked_id}", bought["order_id"],
               user_id, PAY_6, asked_id)
    wait_status(db, [delivered["event_id"], asked_id], "sent")

    [asked] = receiver.of([asked_id])
    assert_documented_post(asked, db, event(db, asked_id))
    assert asked.body["store"] == "google_play"
    assert asked.body["refund_request"] == {"reason": "OTHER", "deadline_at": "2026-11-29T08:00:00Z"}, asked.body


def test_a_subscription_change_carries_the_chain(api, db, receiver, dispatcher):
    """SUBSCRIBED delivers the period to the order its appAccountToken names and starts the chain: its
    subscription_changed event's body carries the chain's status, expiry, auto-renewal and original id."""
    user_id = new_user_id()
    period = game_events.subscribe(api, user_id)
    rows = events_of(db, user_id)
    assert [r["type"] for r in rows] == ["delivered", "subscription_changed"], rows
    wait_status(db, [r["event_id"] for r in rows], "sent")

    [changed] = receiver.of([rows[1]["event_id"]])
    assert_documented_post(changed, db, event(db, rows[1]["event_id"]))
    assert changed.body["subscription"] == {
        "status": "active", "expires_at": iso(datetime.fromtimestamp(period["expiresDate"] // 1000, timezone.utc)),
        "auto_renew": True, "original_transaction_id": period["originalTransactionId"]}, changed.body
    assert changed.body["transaction"]["transaction_id"] == period["transactionId"]


def test_a_failing_receiver_gets_retries_with_backoff_then_the_event(api, db, receipts, receiver, dispatcher):
    """1 s after the first failure, 2 s after the second: each failure's answer is held until the test lets
    it go, so the recorded schedule is bracketed by the answer and the first look at the row after it,
    whatever the machine's load; and no POST comes before its time."""
    receiver.behave(fail_all=True, hold=True)
    user_id = new_user_id()
    deliver(api, receipts, user_id)
    [row] = events_of(db, user_id)
    event_id = row["event_id"]
    due = None
    for attempt, backoff_seconds in ((1, 1), (2, 2), (3, None)):
        wait_until(lambda: len(receiver.of([event_id])) == attempt and receiver.held() == 1, 15,
                   f"POST {attempt} of event {event_id} held")
        if due is not None:
            assert receiver.of([event_id])[-1].started_at >= due.replace(tzinfo=timezone.utc).timestamp(), \
                f"POST {attempt} came before its time {due}"
        receiver.release()
        if backoff_seconds is None:
            break
        failing = wait_until(lambda: failure_recorded(db, event_id, attempt), 15, f"failure {attempt} recorded",
                             interval=0.02)
        assert failing["status"] == "pending" and failing["last_error"] == "HTTP 500", failing
        assert failing["lease_expires_at"] is None
        answered = wall_clock_ms(receiver.of([event_id])[-1].answered_at)
        due = failing["next_attempt_at"]
        assert answered <= due - timedelta(seconds=backoff_seconds) <= failing["db_now"], \
            (attempt, answered, due, failing["db_now"])

    receiver.heal()
    wait_status(db, [event_id], "sent")
    posts = receiver.of([event_id])
    assert [p.status for p in posts[:3]] == [500, 500, 500] and posts[-1].status == 200, posts
    assert sum(p.acknowledged for p in posts) == 1
    assert all(p.raw_body == posts[0].raw_body and p.signature_ok for p in posts)
    sent = event(db, event_id)
    assert sent["attempts"] == len(posts) and sent["last_error"] == "HTTP 500", sent


def test_receiver_down_for_an_hour_then_back_every_event_arrives_in_order(api, db, receipts, receiver, dispatcher):
    receiver.behave(fail_all=True)
    users = [new_user_id() for _ in range(3)]
    for user_id in users:
        deliver(api, receipts, user_id, count=2)
    rows = events_of(db, *users)
    assert len(rows) == 6
    heads = [rows[i]["event_id"] for i in (0, 2, 4)]
    seconds = [rows[i]["event_id"] for i in (1, 3, 5)]
    for event_id in heads:
        wait_attempts(db, event_id, 1)

    # An hour of failures: 12 POSTs (1 s doubling to 2048 s add up to about an hour), the next one due now.
    before = database_now(db)
    move_unleased(db, "created_at = created_at - INTERVAL 1 HOUR, attempts = 12, next_attempt_at = UTC_TIMESTAMP(3)",
                  heads)
    for event_id in heads:
        wait_attempts(db, event_id, 13)
    after = database_now(db)
    for event_id in heads:
        row = event(db, event_id)
        assert row["status"] == "pending", row        # not failed: 71 hours left
        # The backoff stops at an hour: due an hour after the 13th failure, recorded between the two looks.
        assert before <= row["next_attempt_at"] - timedelta(hours=1) <= after, (before, row, after)
    for event_id in seconds:   # each user's next event waits behind the pending one
        assert event(db, event_id)["attempts"] == 0 and not receiver.of([event_id])

    receiver.heal()
    move_unleased(db, "next_attempt_at = UTC_TIMESTAMP(3)", heads)   # the hour passes
    wait_status(db, heads + seconds, "sent")
    assert receiver.acknowledged_ids() >= {str(i) for i in heads + seconds}
    for head, second in zip(heads, seconds):
        acknowledged = [p for p in receiver.of([head]) if p.acknowledged]
        assert len(acknowledged) == 1
        assert acknowledged[0].answered <= receiver.of([second])[0].started
    for delivery in receiver.of(heads + seconds):
        assert delivery.signature_ok and delivery.body["event_id"] == int(delivery.event_id)


def test_seventy_two_hours_of_failures_end_failed_until_redelivered(api, db, receipts, receiver, dispatcher, iapctl):
    receiver.behave(fail_all=True)
    user_id = new_user_id()
    deliver(api, receipts, user_id)
    [row] = events_of(db, user_id)
    wait_attempts(db, row["event_id"], 1)
    move_unleased(db, "created_at = created_at - INTERVAL 73 HOUR, next_attempt_at = UTC_TIMESTAMP(3)",
                  [row["event_id"]])
    wait_status(db, [row["event_id"]], "failed")
    failed = event(db, row["event_id"])
    assert failed["last_error"] == "HTTP 500" and failed["next_attempt_at"] is None and failed["sent_at"] is None
    listed = [line.split("\t") for line in iapctl("events", "--failed", "--limit", "10000").splitlines()]
    assert [str(row["event_id"]), "delivered", row["transaction_id"], user_id, "failed", str(failed["attempts"]),
            "HTTP 500"] in listed
    assert all(line[4] == "failed" for line in listed)

    # A failed event no longer holds back the user's next one.
    receiver.heal()
    deliver(api, receipts, user_id)
    later = events_of(db, user_id)[1]
    wait_status(db, [later["event_id"]], "sent")
    assert event(db, row["event_id"])["status"] == "failed"

    assert iapctl("events", "redeliver", str(row["event_id"])).split() == [str(row["event_id"]), "pending"]
    wait_status(db, [row["event_id"]], "sent")
    redelivered = event(db, row["event_id"])
    assert redelivered["attempts"] == 1 and redelivered["redelivered_at"] is not None, redelivered
    assert receiver.of([row["event_id"]])[-1].acknowledged and receiver.of([row["event_id"]])[-1].signature_ok
    newest = iapctl("events", "--limit", "1").splitlines()
    assert len(newest) == 1 and int(newest[0].split("\t")[0]) >= later["event_id"]


def test_redeliver_of_an_unknown_event_exits_non_zero_with_a_message(db, iapctl):
    unknown = db.scalar("SELECT COALESCE(MAX(event_id), 0) + 1000000 FROM events")
    result = subprocess.run([str(IAP_FCGI.parent / "iapctl"), "events", "redeliver", str(unknown)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and f"no event {unknown}" in result.stderr, result


def test_one_users_events_wait_while_an_earlier_one_is_pending(api, db, receipts, receiver, dispatcher):
    receiver.behave(fail_all=True)
    user_a, user_b = new_user_id(), new_user_id()
    deliver(api, receipts, user_a)
    [first] = events_of(db, user_a)
    wait_attempts(db, first["event_id"], 1)
    receiver.behave(fail_all=False, fail_event_ids={str(first["event_id"])})
    deliver(api, receipts, user_a)
    deliver(api, receipts, user_b)
    second = events_of(db, user_a)[1]
    [other] = events_of(db, user_b)
    wait_status(db, [other["event_id"]], "sent")       # another user's event is not held up
    wait_attempts(db, first["event_id"], 3)            # the first is retried meanwhile ...
    assert not receiver.of([second["event_id"]])       # ... and the second is never POSTed before it
    assert event(db, second["event_id"])["attempts"] == 0

    receiver.heal()
    wait_status(db, [first["event_id"], second["event_id"]], "sent")
    [acknowledged] = [p for p in receiver.of([first["event_id"]]) if p.acknowledged]
    [then] = receiver.of([second["event_id"]])
    assert acknowledged.answered <= then.started


def test_a_receiver_whose_certificate_is_not_trusted_gets_nothing(api, db, receipts, receiver, dispatcher,
                                                                   run_dir, tmp_path):
    dispatcher.stop()
    impostor = WebhookReceiver(SECRET, run_dir / "certs", certificate="untrusted").start()
    service = WebhookService(tmp_path, impostor.url, "webhook-untrusted").start()
    try:
        user_id = new_user_id()
        deliver(api, receipts, user_id)
        [row] = events_of(db, user_id)
        wait_attempts(db, row["event_id"], 1)
        refused = event(db, row["event_id"])
        assert refused["status"] == "pending" and refused["last_error"].startswith("TLS failed"), refused
        assert not impostor.deliveries
    finally:
        assert service.stop() == 0, service.log_text()[-3000:]
        impostor.stop()
        dispatcher.start()
    wait_status(db, [row["event_id"]], "sent")   # the trusted endpoint gets it, at its next attempt
    assert receiver.of([row["event_id"]])[-1].signature_ok


def test_sigkill_while_posting_loses_no_event(api, db, receipts, receiver, dispatcher):
    receiver.behave(hold=True)   # no answer until the process is gone
    users = [new_user_id() for _ in range(8)]
    for user_id in users:
        deliver(api, receipts, user_id)
    ids = [r["event_id"] for r in events_of(db, *users)]
    wait_until(lambda: receiver.held() >= 4, 15, "POSTs under way")
    dispatcher.kill()
    under_way = {d.event_id for d in receiver.of(ids) if d.answered is None}
    assert len(under_way) >= 4, "nothing was under way at the kill"
    leased = db.scalar(f"SELECT COUNT(*) FROM events WHERE event_id IN ({placeholders(ids)})"
                       " AND lease_expires_at > UTC_TIMESTAMP(3)", *ids)
    assert leased >= len(under_way), "the killed process's POSTs hold their leases"
    receiver.heal()
    end_leases_taken_before(db, ids, database_now(db))   # the killed process's leases end first
    dispatcher.start()
    wait_status(db, ids, "sent")
    assert receiver.acknowledged_ids() >= {str(i) for i in ids}
    for event_id in under_way:   # cut off at the kill (its answer never read): POSTed again, same id
        posts = receiver.of([event_id])
        assert len(posts) >= 2 and {p.body["event_id"] for p in posts} == {int(event_id)}
    assert not receiver.overlaps


@pytest.mark.outage("mariadb")
def test_mariadb_stopped_while_posting_loses_no_event(api, db, receipts, receiver, dispatcher, stack):
    receiver.behave(hold=True)   # answered only once MariaDB is down
    users = [new_user_id() for _ in range(4)]
    for user_id in users:
        deliver(api, receipts, user_id)
    ids = [r["event_id"] for r in events_of(db, *users)]
    wait_until(lambda: receiver.held() >= 1 and receiver.of(ids), 15, "POSTs under way")
    before_outage = database_now(db)
    stack("stop mariadb")
    try:
        held = [d for d in receiver.of(ids) if d.answered is None]
        receiver.heal()
        # The POSTs under way are answered with MariaDB down, and the dispatcher has met the outage.
        wait_until(lambda: all(d.answered is not None for d in held), 15, "the held POSTs answered")
        wait_until(lambda: "webhook: database error" in dispatcher.log_text(), 15, "the dispatcher meeting the outage")
    finally:
        stack("start mariadb")
    wait_until(lambda: api.get("/v1/health").status_code == 200, 30, "the service healthy again")
    # Unrecorded answers leave their events leased: sent again once the leases end, same event_id.
    end_leases_taken_before(db, ids, before_outage)
    wait_status(db, ids, "sent", timeout=30)
    assert receiver.acknowledged_ids() >= {str(i) for i in ids}
    assert all(d.body["event_id"] == int(d.event_id) for d in receiver.of(ids))
    assert not receiver.overlaps
    log = dispatcher.log_text()
    assert "webhook: database error" in log and "webhook: database reachable again" in log, log[-3000:]


def test_two_processes_never_post_one_event_at_the_same_time(api, db, receipts, receiver, dispatcher,
                                                             tmp_path):
    second = WebhookService(tmp_path, receiver.url, "webhook-b").start()
    try:
        receiver.behave(stall_seconds=0.3)
        users = [new_user_id() for _ in range(24)]
        for user_id in users:
            deliver(api, receipts, user_id)
        ids = [r["event_id"] for r in events_of(db, *users)]
        wait_status(db, ids, "sent", timeout=30)
    finally:
        assert second.stop() == 0, second.log_text()[-3000:]
    assert not receiver.overlaps, receiver.overlaps
    posts = receiver.of(ids)
    assert sorted(int(p.event_id) for p in posts) == sorted(ids)   # each exactly once
    assert all(p.signature_ok and p.acknowledged for p in posts)


def test_sigterm_finishes_the_post_under_way_and_records_it(api, db, receipts, receiver, dispatcher):
    """The POST is held at the receiver until the stopping process has only its webhook left to stop (its
    accept threads and Apple's client thread are gone): the stop waits for that POST and records it."""
    receiver.behave(hold=True)
    user_id = new_user_id()
    deliver(api, receipts, user_id)
    [row] = events_of(db, user_id)
    wait_until(lambda: receiver.held() == 1 and receiver.of([row["event_id"]]), 15, "the POST under way")
    dispatcher.process.terminate()
    wait_until(lambda: not thread_names(dispatcher.process.pid) & {"accept", "apple-client"}, 30,
               "iap-fcgi stopping all but its webhook")
    assert receiver.held() == 1 and dispatcher.process.poll() is None
    receiver.release()
    released = time.monotonic()
    assert dispatcher.stop() == 0, dispatcher.log_text()[-3000:]
    assert time.monotonic() - released < 15
    assert event(db, row["event_id"])["status"] == "sent"
    assert "stopped" in dispatcher.log_text().splitlines()[-1]
    dispatcher.start()


def test_pull_mode_consumes_an_event_exactly_once(api, db, receipts):
    """The game's SQL from docs/events.md: of two transactions racing for one event, one changes the row."""
    user_id = new_user_id()
    deliver(api, receipts, user_id)
    [row] = events_of(db, user_id)
    claim = "UPDATE events SET consumed_at = UTC_TIMESTAMP(3) WHERE event_id = %s AND consumed_at IS NULL"
    first, second = (pymysql.connect(**dict(db.connect_args, autocommit=False)) for _ in range(2))
    try:
        with first.cursor() as cursor:
            assert cursor.execute(claim, (row["event_id"],)) == 1
        outcome = {}

        def racing():
            with second.cursor() as cursor:
                outcome["rows"] = cursor.execute(claim, (row["event_id"],))
            second.commit()
        racer = threading.Thread(target=racing)
        racer.start()
        # It waits for the first transaction's row lock.
        wait_until(lambda: lock_waiting_queries("UPDATE events SET consumed_at"), 30, "the second claim waiting")
        assert "rows" not in outcome
        first.commit()
        racer.join(10)
        assert outcome["rows"] == 0
    finally:
        first.close()
        second.close()
    assert event(db, row["event_id"])["consumed_at"] is not None


@pytest.mark.parametrize("variables, named", [
    ({"IAP_WEBHOOK_URL": "https://127.0.0.1:1/iap/events"}, "IAP_WEBHOOK_SECRET"),
    ({"IAP_WEBHOOK_URL": "https://127.0.0.1:1/iap/events", "IAP_WEBHOOK_SECRET": "too-short-42"}, "IAP_WEBHOOK_SECRET"),
    ({"IAP_WEBHOOK_URL": "http://192.0.2.1:1/iap/events", "IAP_WEBHOOK_SECRET": SECRET}, "IAP_WEBHOOK_URL"),
    ({"IAP_WEBHOOK_SECRET": SECRET}, "IAP_WEBHOOK_URL"),
])
def test_a_webhook_misconfigured_stops_the_start_naming_the_variable(tmp_path, variables, named):
    status, log = start_up_refusal(tmp_path / "iap-fcgi.log", IAP_LISTEN=str(tmp_path / "refused.sock"), **variables)
    assert status != 0 and named in log and "serving on" not in log, log
    assert SECRET not in log and "too-short-42" not in log, log
