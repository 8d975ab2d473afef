"""POST /v1/notifications/apple: App Store Server Notifications V2 (docs/api.md), through nginx, iap-fcgi and
MariaDB, signed with the stack's test PKI as Apple signs them (an outer JWS with the signed transaction
inside). Each row of the table of effects, forged and foreign notifications, repeats and flips, the
claim of an unclaimed transaction by the first verify, the simulator's sending with Apple's retries, and
the SQL invariants of `events`."""
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from notification_support import (CERTS, ROUTE, deliver_by_verify, event_invariant_violations, events_of,
                                  notification_row, now_ms, post, purchase, refunded, send, signed, verify_jws)
from support import PAY_6, PAY_30, assert_error, assert_verify_answer, new_user_id, wait_until

import notifications as simulated
import signed_data


def assert_applied(db, notification, effect, applied=True):
    row = notification_row(db, notification["notificationUUID"])
    assert row is not None, f"{notification['notificationType']} was not stored"
    assert (row["effect"], row["applied"]) == (effect, 1 if applied else 0), row
    assert row["notification_type"] == notification["notificationType"] and row["source"] == "post"
    return row


# --- the table of effects ------------------------------------------------------------------------------

def test_one_time_charge_delivers_to_the_open_order_its_token_names(api, db):
    user = new_user_id()
    order = api.create_order(user)
    payload = purchase(app_account_token=order["order_id"])
    notification = send(api, "ONE_TIME_CHARGE", payload)

    assert_applied(db, notification, "delivered")
    row = db.transaction(payload["transactionId"])
    assert (row["state"], row["order_id"], row["user_id"]) == ("delivered", order["order_id"], user)
    assert row["receipt_id"] is None and row["delivered_at"] is not None
    assert db.order(order["order_id"])["status"] == "delivered"
    assert events_of(db, payload["transactionId"]) == [("delivered", user, order["order_id"])]
    # The app's own verify afterwards finds it delivered: once.
    body = assert_verify_answer(verify_jws(api, payload), "already_delivered")
    assert body["transactions"][0]["order_id"] == order["order_id"]
    assert len(events_of(db, payload["transactionId"])) == 1


def test_one_time_charge_for_a_used_order_or_another_product_makes_a_notification_order(api, db):
    user = new_user_id()
    used, _ = deliver_by_verify(api, db, user)
    other_product = api.create_order(user, PAY_30)
    for token in (used["appAccountToken"], other_product["order_id"]):
        payload = purchase(PAY_6, app_account_token=token)
        send(api, "ONE_TIME_CHARGE", payload)
        row = db.transaction(payload["transactionId"])
        assert row["state"] == "delivered" and row["user_id"] == user
        made = db.order(row["order_id"])
        assert (made["origin"], made["status"], made["user_id"], made["product_id"]) == (
            "notification", "delivered", user, PAY_6)
        assert events_of(db, payload["transactionId"]) == [("delivered", user, row["order_id"])]
    assert db.order(other_product["order_id"])["status"] == "created", "an order of another product stays open"


def test_one_time_charge_without_a_token_is_unclaimed_until_the_first_verify(api, db):
    payload = purchase()
    notification = send(api, "ONE_TIME_CHARGE", payload)
    assert_applied(db, notification, "unclaimed")
    row = db.transaction(payload["transactionId"])
    assert (row["state"], row["user_id"], row["order_id"], row["receipt_id"]) == ("unclaimed", None, None, None)
    assert events_of(db, payload["transactionId"]) == []

    user = new_user_id()
    body = assert_verify_answer(verify_jws(api, payload, user_id=user), "delivered")
    row = db.transaction(payload["transactionId"])
    assert (row["state"], row["user_id"], row["order_id"]) == ("delivered", user, body["order_id"])
    assert row["receipt_id"] is not None and row["delivered_at"] is not None
    assert db.order(row["order_id"])["origin"] == "receipt"
    assert events_of(db, payload["transactionId"]) == [("delivered", user, row["order_id"])]
    # A second user showing it later gets nothing.
    assert_verify_answer(verify_jws(api, payload, user_id=new_user_id()), "already_delivered")
    assert db.transaction(payload["transactionId"])["user_id"] == user
    assert len(events_of(db, payload["transactionId"])) == 1


def test_unclaimed_transactions_are_claimed_by_receipts_in_a_batch_once(api, db, receipts):
    """Receipts posted at once go through one delivery batch; those whose transaction row exists
    (unclaimed) go to Delivery one by one, which claims them for the request's user."""
    unclaimed = [purchase() for _ in range(4)]
    for payload in unclaimed:
        send(api, "ONE_TIME_CHARGE", payload)
    users = [new_user_id() for _ in range(8)]
    posted = [receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=p["transactionId"])]) for p in unclaimed]
    posted += [receipts.app_receipt([receipts.purchase(PAY_6)]) for _ in range(4)]
    with ThreadPoolExecutor(len(posted)) as pool:
        answers = list(pool.map(lambda pair: api.verify(pair[0], user_id=pair[1]), zip(posted, users)))
    for answer in answers:
        assert_verify_answer(answer, "delivered")
    for payload, user in zip(unclaimed, users):
        row = db.transaction(payload["transactionId"])
        assert (row["state"], row["user_id"]) == ("delivered", user)
        assert events_of(db, payload["transactionId"]) == [("delivered", user, row["order_id"])]


def test_sandbox_charge_is_delivered_only_to_a_sandbox_user(api, db, service_settings):
    tester, player = new_user_id(), new_user_id()
    service_settings.apply(sandbox_users=tester)
    for user, expected in ((tester, "delivered"), (player, "unclaimed")):
        order = api.create_order(user)
        payload = purchase(app_account_token=order["order_id"], environment="Sandbox")
        notification = send(api, "ONE_TIME_CHARGE", payload, environment="Sandbox")
        assert_applied(db, notification, expected)
        row = db.transaction(payload["transactionId"])
        assert row["state"] == expected and row["environment"] == "Sandbox"
        assert db.order(order["order_id"])["status"] == ("delivered" if expected == "delivered" else "created")
        assert len(events_of(db, payload["transactionId"])) == (1 if expected == "delivered" else 0)


@pytest.mark.parametrize("notification_type", ["REFUND", "REVOKE"])
def test_refund_of_a_delivered_transaction_takes_the_goods_back(api, db, notification_type):
    user = new_user_id()
    payload, order_id = deliver_by_verify(api, db, user)
    revoked_at = now_ms() - 60_000
    notification = send(api, notification_type, refunded(payload, revoked_at, "REFUND_PRORATED", 25000, 1))
    assert_applied(db, notification, "refunded")
    row = db.transaction(payload["transactionId"])
    assert (row["state"], row["order_id"], row["user_id"]) == ("refunded", order_id, user)
    assert (row["revocation_type"], row["revocation_percentage"], row["revocation_reason"]) == (
        "REFUND_PRORATED", 25000, 1)
    assert row["cancellation_date"] == datetime.fromtimestamp(revoked_at / 1000, timezone.utc).replace(tzinfo=None)
    assert db.order(order_id)["status"] == "refunded"
    assert events_of(db, payload["transactionId"]) == [("delivered", user, order_id), ("refunded", user, order_id)]
    occurred = db.scalar("SELECT occurred_at FROM events WHERE transaction_id = %s AND type = 'refunded'",
                         payload["transactionId"])
    assert occurred == row["cancellation_date"], "the refund happened at Apple's revocationDate"


def test_refund_of_a_transaction_never_seen_keeps_any_verify_from_delivering_it(api, db, receipts):
    payload = purchase()
    notification = send(api, "REFUND", refunded(payload))
    assert_applied(db, notification, "refunded")
    row = db.transaction(payload["transactionId"])
    assert (row["state"], row["user_id"], row["order_id"]) == ("refunded", None, None)

    user = new_user_id()
    body = assert_verify_answer(verify_jws(api, payload, user_id=user), "not_paid")
    assert body["transactions"][0]["state"] == "refunded"
    receipt = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=payload["transactionId"])])
    assert_verify_answer(api.verify(receipt, user_id=user), "not_paid")
    row = db.transaction(payload["transactionId"])
    assert (row["state"], row["order_id"], row["delivered_at"]) == ("refunded", None, None)
    assert db.orders_of(user) == [] and events_of(db, payload["transactionId"]) == []


def test_refund_of_an_unclaimed_transaction_leaves_nothing_to_claim(api, db):
    payload = purchase()
    send(api, "ONE_TIME_CHARGE", payload)
    send(api, "REFUND", refunded(payload))
    assert db.transaction(payload["transactionId"])["state"] == "refunded"
    assert_verify_answer(verify_jws(api, payload, user_id=new_user_id()), "not_paid")
    assert events_of(db, payload["transactionId"]) == []


def test_refund_reversed_delivers_again_what_had_been_delivered(api, db):
    user = new_user_id()
    payload, order_id = deliver_by_verify(api, db, user)
    refund = send(api, "REFUND", refunded(payload))
    reversal = send(api, "REFUND_REVERSED", payload, signed_ms=refund["signedDate"] + 1000)
    assert_applied(db, reversal, "restored")
    row = db.transaction(payload["transactionId"])
    assert (row["state"], row["order_id"], row["cancellation_date"], row["revocation_type"]) == (
        "delivered", order_id, None, None)
    assert db.order(order_id)["status"] == "delivered"
    assert events_of(db, payload["transactionId"]) == [
        ("delivered", user, order_id), ("refunded", user, order_id), ("refund_reversed", user, order_id)]


def test_refund_reversed_of_a_never_delivered_transaction_is_what_it_would_have_been(api, db):
    user = new_user_id()
    order = api.create_order(user)
    with_token = purchase(app_account_token=order["order_id"])
    without = purchase()
    for payload in (with_token, without):
        refund = send(api, "REFUND", refunded(payload))
        send(api, "REFUND_REVERSED", payload, signed_ms=refund["signedDate"] + 1000)
    row = db.transaction(with_token["transactionId"])
    assert (row["state"], row["order_id"], row["user_id"]) == ("delivered", order["order_id"], user)
    assert events_of(db, with_token["transactionId"]) == [("delivered", user, order["order_id"])]
    row = db.transaction(without["transactionId"])
    assert (row["state"], row["order_id"], row["cancellation_date"]) == ("unclaimed", None, None)
    assert events_of(db, without["transactionId"]) == []


@pytest.mark.parametrize("notification_type", ["REFUND_DECLINED", "CONSUMPTION_REQUEST", "SOMETHING_NEW"])
def test_other_types_are_stored_and_change_nothing(api, db, notification_type):
    user = new_user_id()
    payload, order_id = deliver_by_verify(api, db, user)
    before = db.transaction(payload["transactionId"])
    notification = send(api, notification_type, payload)
    row = assert_applied(db, notification, "stored", applied=False)
    assert row["transaction_id"] == payload["transactionId"]
    assert db.transaction(payload["transactionId"]) == before
    # A refund request tells the game (test_refund_requests_ledger.py); nothing is taken back.
    asked = [("refund_requested", user, order_id)] if notification_type == "CONSUMPTION_REQUEST" else []
    assert events_of(db, payload["transactionId"]) == [("delivered", user, order_id)] + asked


def test_a_test_notification_without_a_transaction_is_stored(api, db):
    notification = send(api, "TEST", None)
    row = assert_applied(db, notification, "stored", applied=False)
    assert row["transaction_id"] is None and row["environment"] == "Production"


# --- forged and foreign ---------------------------------------------------------------------------------

def forgeries():
    payload = refunded(purchase())
    inner = signed_data.sign(payload, CERTS)
    cases = {
        "untrusted chain": signed("REFUND", payload, chain="untrusted")[0],
        "leaf without its OID": signed("REFUND", payload, chain="leaf-without-oid")[0],
        "another bundle": signed("REFUND", payload, bundle_id="com.example.other")[0],
        "inner transaction of another bundle": signed("REFUND", dict(payload, bundleId="com.example.other"))[0],
    }
    good, notification = signed("REFUND", payload)
    header, body, signature = good.split(".")
    cases["bad signature"] = f"{header}.{body}.{signature[:-4]}AAAA"
    forged_key = signed_data.ec.generate_private_key(signed_data.ec.SECP256R1())
    cases["signed by another key"] = signed_data.sign(notification, CERTS, signing_key=forged_key)
    untrusted_inner = signed_data.sign(payload, CERTS, chain="untrusted")
    cases["inner JWS that does not verify"] = signed_data.sign(
        simulated.notification("REFUND", untrusted_inner), CERTS)
    cases["inner JWS changed"] = signed_data.sign(
        simulated.notification("REFUND", inner[:-6] + "AAAAAA"), CERTS)
    return payload, cases


def test_forged_and_foreign_notifications_are_400_and_change_nothing(api, db):
    payload, cases = forgeries()
    notifications_before = db.scalar("SELECT COUNT(*) FROM notifications")
    for name, jws in cases.items():
        assert_error(post(api, jws), 400, "invalid_signed_data")
    assert db.scalar("SELECT COUNT(*) FROM notifications") == notifications_before, "a forgery was stored"
    assert db.transaction(payload["transactionId"]) is None


@pytest.mark.parametrize("body", [b"", b"{", b'{"signedPayload": 5}', b"{}", b'{"signedPayload": "a b"}'])
def test_bodies_that_are_not_a_notification_are_400(api, body):
    answer = api.post_raw(ROUTE, body)
    assert answer.status_code == 400 and answer.json()["error"]["code"] in (
        "invalid_json", "missing_field", "invalid_field"), answer.text


def test_get_is_405_and_a_large_body_413(api):
    assert_error(api.get(ROUTE), 405, "method_not_allowed")
    assert_error(api.post_raw(ROUTE, b'{"signedPayload":"' + b"a" * 70_000 + b'"}'), 413, "body_too_large")


# --- repeats and flips ------------------------------------------------------------------------------------

def test_the_same_notification_six_times_and_six_at_once_leaves_one_row_and_one_effect(api, db):
    user = new_user_id()
    one_by_one, _ = deliver_by_verify(api, db, user)
    jws, notification = signed("REFUND", refunded(one_by_one))
    for _ in range(6):
        assert post(api, jws).json() == {"status": "accepted", "notification_uuid": notification["notificationUUID"]}
    at_once, order_id = deliver_by_verify(api, db, user)
    jws_at_once, notification_at_once = signed("REFUND", refunded(at_once))
    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda _: post(api, jws_at_once), range(6)))
    assert [a.status_code for a in answers] == [200] * 6, [a.text for a in answers]
    for payload, sent in ((one_by_one, notification), (at_once, notification_at_once)):
        assert db.scalar("SELECT COUNT(*) FROM notifications WHERE notification_uuid = %s",
                         sent["notificationUUID"]) == 1
        assert [e[0] for e in events_of(db, payload["transactionId"])] == ["delivered", "refunded"]
        assert db.transaction(payload["transactionId"])["state"] == "refunded"


FLIPS = [("REFUND_DECLINED", 1), ("REFUND", 2), ("REFUND_REVERSED", 3), ("REFUND", 4)]


@pytest.mark.parametrize("arrival", [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1], [1, 3, 0, 2]])
def test_flips_end_in_the_state_of_the_signed_date_order_whatever_the_arrival(api, db, arrival):
    """declined, refunded, reversed, refunded again: whatever order they arrive in, the transaction ends
    refunded, and an older one than the last applied is stored as stale."""
    user = new_user_id()
    payload, order_id = deliver_by_verify(api, db, user)
    base = now_ms()
    for index in arrival:
        notification_type, offset = FLIPS[index]
        body = refunded(payload) if notification_type == "REFUND" else payload
        send(api, notification_type, body, signed_ms=base + offset * 1000)
    row = db.transaction(payload["transactionId"])
    assert row["state"] == "refunded" and db.order(order_id)["status"] == "refunded"
    assert row["notification_signed_at"] is not None
    effects = [r["effect"] for r in db.query(
        "SELECT effect FROM notifications WHERE transaction_id = %s ORDER BY received_at", payload["transactionId"])]
    assert len(effects) == 4
    if arrival == [3, 2, 1, 0]:
        assert effects == ["refunded", "stale", "stale", "stored"], effects
    types = [e[0] for e in events_of(db, payload["transactionId"])]
    assert types[0] == "delivered" and types[-1] == "refunded", types


# --- the simulator sends, with Apple's retries ---------------------------------------------------------------

class FailingFirst:
    """An HTTP endpoint in front of the service that answers 500 to the first `failures` POSTs and passes
    the others on to the notifications route: Apple's view of an outage."""

    def __init__(self, target, failures):
        self.target, self.failures, self.seen = target, failures, 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.seen += 1
                if outer.seen <= outer.failures:
                    status, answer = 500, b'{"error":"down"}'
                else:
                    forwarded = requests.post(outer.target, data=body, timeout=10)
                    status, answer = forwarded.status_code, forwarded.content
                self.send_response(status)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


def test_the_simulator_sends_a_notification_again_until_it_is_accepted(api, db, simulator):
    user = new_user_id()
    order = api.create_order(user)
    endpoint = FailingFirst(api.url(ROUTE), failures=2)
    try:
        sent = requests.post(f"{simulator.base_url}/notifications/send", json={
            "url": endpoint.url, "notification_type": "ONE_TIME_CHARGE", "retry_intervals_s": [0.3, 0.3, 0.3],
            "transaction": {"product_id": PAY_6, "app_account_token": order["order_id"]}}, timeout=10).json()

        def delivered():
            entries = requests.get(f"{simulator.base_url}/notifications/sent", timeout=10).json()
            return next((e for e in entries if e["notification_uuid"] == sent["notification_uuid"]
                         and e["delivered"]), None)
        entry = wait_until(delivered, 10, "the notification accepted after Apple's retries")
    finally:
        endpoint.close()
    assert [a.get("status") for a in entry["attempts"]] == [500, 500, 200]
    row = db.transaction(sent["transaction_id"])
    assert (row["state"], row["order_id"], row["user_id"]) == ("delivered", order["order_id"], user)
    assert notification_row(db, sent["notification_uuid"])["effect"] == "delivered"
    assert len(events_of(db, sent["transaction_id"])) == 1


# --- the invariants ----------------------------------------------------------------------------------------

def test_event_invariants_hold_over_everything_these_tests_did(db):
    """Runs after the tests above in this file (pytest keeps the file's order)."""
    assert db.scalar("SELECT COUNT(*) FROM notifications") > 0
    assert event_invariant_violations(db) == []
