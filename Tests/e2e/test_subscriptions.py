"""Auto-renewable subscriptions on a calendar (docs/api.md "Subscriptions"): each chain's `subscriptions` row
moved by notifications, JWS and receipts in the order of their dates, every renewal delivered once to the user of
the chain's first delivery, a `subscription_changed` event when the status, expiry or auto-renewal changes, and the
`entitlements` view right as time passes. Notifications are signed by the simulator's code with the stack's PKI,
the renewal info shaped by Tests/Simulator/subscription_notifications.py."""
import os
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

import notifications
import requests
import signed_data
import subscription_notifications
from cryptography.hazmat.primitives.asymmetric import ec

from invariants import assert_events_follow_transactions
from notification_support import CERTS, now_ms, post, refunded, send, verify_jws
from test_notification_sync import UNREACHABLE, simulator_send, synced
from test_receipt_modes import OwnVerifier
from test_subscriptions_iapctl import iapctl as sync_iapctl, sim_chain, subscribed
from support import PAY_30, PAY_98, assert_verify_answer, new_transaction_id, new_user_id, wait_until

SUBSCRIPTION = subscription_notifications.SUBSCRIPTION
DAY = 86_400_000
# The periods last an hour: every date Apple signs must fall within the test PKI's validity, which
# began a day before the stack started.
PERIOD = 3_600_000


class Chain:
    """A chain on a calendar: period `index` is bought `index` periods after `start` (by default a period and a
    half ago, so that period 1 is the one running now)."""

    def __init__(self, product=PAY_30, start=None):
        self.original_id = new_transaction_id()
        self.product = product
        # Whole seconds, as a receipt's dates are.
        self.start = (start if start is not None else now_ms() - PERIOD - PERIOD // 2) // 1000 * 1000
        self.ids = {0: self.original_id}

    def period(self, index, product=None, token=None, expires=None, **fields):
        """The transaction payload of period `index`."""
        transaction_id = self.ids.setdefault(index, new_transaction_id())
        return signed_data.transaction(
            product or self.product, transaction_id=transaction_id, original_transaction_id=self.original_id,
            type=SUBSCRIPTION, purchase_ms=self.start + index * PERIOD,
            expires_ms=expires or self.start + (index + 1) * PERIOD, app_account_token=token, **fields)

    def notify(self, api, notification_type, subtype, payload, signed_ms, **renewal_fields):
        """Posts the notification signed at `signed_ms`, with the renewal info Apple would send with it."""
        renewal = subscription_notifications.renewal_info_for(
            notification_type, subtype, payload, signed_ms=signed_ms, **renewal_fields)
        return send(api, notification_type, payload, subtype=subtype, signed_ms=signed_ms, renewal_payload=renewal)

    def row(self, db):
        return db.one("SELECT * FROM subscriptions WHERE original_transaction_id = %s", self.original_id)

    def changes(self, db):
        """Its subscription_changed events, oldest first, as (status, user_id)."""
        return [(e["subscription_status"], e["user_id"]) for e in db.query(
            "SELECT subscription_status, user_id FROM events WHERE original_transaction_id = %s"
            " AND type = 'subscription_changed' ORDER BY event_id", self.original_id)]

    def deliveries(self, db, index):
        """The `delivered` events of period `index`, as user ids."""
        return [e["user_id"] for e in db.query(
            "SELECT user_id FROM events WHERE transaction_id = %s AND type = 'delivered'", self.ids[index])]


def entitled(db, user):
    return {row["product_id"]: row for row in db.query("SELECT * FROM entitlements WHERE user_id = %s", user)}


def subscribe(api, db, chain, user, signed_ms=None):
    """Period 0 bought with an order of `user`: SUBSCRIBED delivers it to that order."""
    order = api.create_order(user, PAY_30)
    first = chain.period(0, token=order["order_id"])
    chain.notify(api, "SUBSCRIBED", "INITIAL_BUY", first, signed_ms or chain.start + 1000)
    assert db.transaction(first["transactionId"])["order_id"] == order["order_id"]
    return order["order_id"]


def ms(value):
    """A DATETIME(3) value pymysql returned, as ms since 1970 UTC."""
    return round(value.replace(tzinfo=timezone.utc).timestamp() * 1000)


def test_renewals_while_the_app_is_closed_go_to_the_user_of_the_first_delivery(api, db):
    chain, user = Chain(), new_user_id()
    subscribe(api, db, chain, user)
    assert chain.row(db)["user_id"] == user and chain.row(db)["status"] == "active"
    renewal = chain.period(1)
    chain.notify(api, "DID_RENEW", None, renewal, chain.start + PERIOD + 1000)

    row = chain.row(db)
    assert (row["status"], row["latest_transaction_id"], row["auto_renew"]) == ("active", chain.ids[1], 1)
    assert ms(row["expires_at"]) == renewal["expiresDate"]
    assert chain.deliveries(db, 1) == [user]
    assert db.transaction(chain.ids[1])["user_id"] == user
    assert set(entitled(db, user)) == {PAY_30}
    assert chain.changes(db) == [("active", user), ("active", user)]  # subscribed, then a new expiry
    # The same renewal again (a JWS of it, a notification retried): nothing more.
    assert_verify_answer(verify_jws(api, renewal, user_id=user), "already_delivered")
    chain.notify(api, "DID_RENEW", None, renewal, chain.start + PERIOD + 2000)
    assert chain.deliveries(db, 1) == [user]
    assert len(chain.changes(db)) == 2


def test_a_renewal_arriving_before_its_subscribed_is_delivered_once_to_the_same_user(api, db):
    chain, user = Chain(), new_user_id()
    # The client's JWS of period 0 came first: the chain is the user's.
    order = api.create_order(user, PAY_30)
    first = chain.period(0, token=order["order_id"])
    assert_verify_answer(verify_jws(api, first, user_id=user), "delivered")
    renewal = chain.period(1)
    chain.notify(api, "DID_RENEW", None, renewal, chain.start + PERIOD + 1000)
    chain.notify(api, "SUBSCRIBED", "INITIAL_BUY", first, chain.start + 1000)  # late, older

    row = chain.row(db)
    assert (row["status"], row["latest_transaction_id"], row["user_id"]) == ("active", chain.ids[1], user)
    assert chain.deliveries(db, 0) == [user] and chain.deliveries(db, 1) == [user]


def test_expired_before_the_last_did_renew_is_applied_changes_nothing_of_the_newer(api, db):
    chain, user = Chain(), new_user_id()
    subscribe(api, db, chain, user)
    renewal = chain.period(1)
    # An EXPIRED signed before the DID_RENEW (the renewal is the newer news) arrives after it.
    chain.notify(api, "DID_RENEW", None, renewal, chain.start + PERIOD + 1000)
    chain.notify(api, "EXPIRED", "VOLUNTARY", chain.period(0), chain.start + PERIOD - 1000)
    row = chain.row(db)
    assert (row["status"], row["expiration_intent"]) == ("active", None)
    assert set(entitled(db, user)) == {PAY_30}


def test_expired_after_the_last_period_ends_the_chain(api, db):
    chain, user = Chain(), new_user_id()
    subscribe(api, db, chain, user)
    chain.notify(api, "DID_RENEW", None, chain.period(1), chain.start + PERIOD + 1000)
    chain.notify(api, "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", chain.period(1), chain.start + PERIOD + 5000)
    assert chain.row(db)["auto_renew"] == 0 and chain.row(db)["status"] == "active"
    chain.notify(api, "EXPIRED", "VOLUNTARY", chain.period(1), now_ms())
    row = chain.row(db)
    assert (row["status"], row["expiration_intent"]) == ("expired", "VOLUNTARY")
    assert entitled(db, user) == {}
    assert [c[0] for c in chain.changes(db)] == ["active", "active", "active", "expired"]


def test_a_refund_of_the_latest_period_revokes_the_chain_with_the_refund_event(api, db):
    chain, user = Chain(), new_user_id()
    subscribe(api, db, chain, user)
    renewal = chain.period(1)
    chain.notify(api, "DID_RENEW", None, renewal, chain.start + PERIOD + 1000)
    revoked_at = now_ms()
    send(api, "REFUND", refunded(renewal, revocation_ms=revoked_at), signed_ms=revoked_at + 1000)

    assert chain.row(db)["status"] == "revoked"
    assert entitled(db, user) == {}
    assert db.transaction(chain.ids[1])["state"] == "refunded"
    types = [e["type"] for e in db.query(
        "SELECT type FROM events WHERE original_transaction_id = %s ORDER BY event_id", chain.original_id)]
    assert types[-2:] == ["refunded", "subscription_changed"]


def test_a_refund_of_an_older_period_leaves_the_chain_active(api, db):
    chain, user = Chain(), new_user_id()
    first_order = subscribe(api, db, chain, user)
    chain.notify(api, "DID_RENEW", None, chain.period(1), chain.start + PERIOD + 1000)
    send(api, "REFUND", refunded(chain.period(0), revocation_ms=now_ms()))
    assert db.order(first_order)["status"] == "refunded"
    assert chain.row(db)["status"] == "active"
    assert set(entitled(db, user)) == {PAY_30}


def test_an_upgrade_within_the_group_changes_the_chains_product(api, db):
    chain, user = Chain(), new_user_id()
    subscribe(api, db, chain, user)
    upgrade_at = now_ms() - 600_000
    upgraded = signed_data.transaction(
        PAY_98, transaction_id=new_transaction_id(), original_transaction_id=chain.original_id, type=SUBSCRIPTION,
        purchase_ms=upgrade_at, expires_ms=upgrade_at + PERIOD)
    chain.notify(api, "DID_CHANGE_RENEWAL_PREF", "UPGRADE", upgraded, upgrade_at + 1000)

    row = chain.row(db)
    assert (row["product_id"], row["latest_transaction_id"], row["status"]) == (
        PAY_98, upgraded["transactionId"], "active")
    assert ms(row["expires_at"]) == upgrade_at + PERIOD
    assert set(entitled(db, user)) == {PAY_98}
    assert [e["user_id"] for e in db.query("SELECT user_id FROM events WHERE transaction_id = %s AND type ="
                                           " 'delivered'", upgraded["transactionId"])] == [user]


def test_a_grace_period_entitles_until_it_ends_then_billing_retry_does_not(api, db):
    # Period 0 ended a minute ago; the renewal failed into a grace period of 16 days past that end.
    chain, user = Chain(start=now_ms() - PERIOD - 60_000), new_user_id()
    subscribe(api, db, chain, user)
    failed_at = chain.start + PERIOD + 1000
    chain.notify(api, "DID_FAIL_TO_RENEW", "GRACE_PERIOD", chain.period(0), failed_at)
    row = chain.row(db)
    assert row["status"] == "grace_period"
    assert ms(row["grace_period_expires_at"]) == chain.start + PERIOD + subscription_notifications.GRACE_PERIOD_MS
    assert entitled(db, user)[PAY_30]["status"] == "grace_period"

    chain.notify(api, "GRACE_PERIOD_EXPIRED", None, chain.period(0), failed_at + 1000)
    row = chain.row(db)
    assert (row["status"], row["grace_period_expires_at"]) == ("billing_retry", None)
    assert entitled(db, user) == {}
    assert [c[0] for c in chain.changes(db)] == ["active", "grace_period", "billing_retry"]


def test_billing_retry_without_a_grace_period_is_not_entitled_and_a_recovery_is(api, db):
    chain, user = Chain(start=now_ms() - PERIOD - 60_000), new_user_id()
    subscribe(api, db, chain, user)
    chain.notify(api, "DID_FAIL_TO_RENEW", None, chain.period(0), chain.start + PERIOD + 1000)
    assert chain.row(db)["status"] == "billing_retry" and entitled(db, user) == {}
    recovered = chain.period(1)
    chain.notify(api, "DID_RENEW", "BILLING_RECOVERY", recovered, chain.start + PERIOD + 2000)
    assert chain.row(db)["status"] == "active" and set(entitled(db, user)) == {PAY_30}
    assert chain.deliveries(db, 1) == [user]


def test_a_chain_past_its_expiry_with_no_notification_is_not_entitled(api, db):
    chain, user = Chain(start=now_ms() - PERIOD - 60_000), new_user_id()  # period 0 ended a minute ago
    subscribe(api, db, chain, user)
    assert chain.row(db)["status"] == "active"
    assert entitled(db, user) == {}


def test_renewal_extended_moves_the_expiry(api, db):
    chain, user = Chain(), new_user_id()
    subscribe(api, db, chain, user)
    chain.notify(api, "DID_RENEW", None, chain.period(1), chain.start + PERIOD + 1000)
    later = chain.start + 2 * PERIOD + 7 * DAY
    chain.notify(api, "RENEWAL_EXTENDED", None, chain.period(1, expires=later), now_ms())
    assert ms(chain.row(db)["expires_at"]) == later
    assert chain.deliveries(db, 1) == [user]


def test_an_unclaimed_chain_waits_then_its_first_delivery_claims_every_period(api, db):
    chain, user = Chain(), new_user_id()
    first = chain.period(0)  # no appAccountToken: nobody here bought it
    chain.notify(api, "SUBSCRIBED", "INITIAL_BUY", first, chain.start + 1000)
    chain.notify(api, "DID_RENEW", None, chain.period(1), chain.start + PERIOD + 1000)
    row = chain.row(db)
    assert (row["user_id"], row["status"], row["latest_transaction_id"]) == (None, "active", chain.ids[1])
    assert db.transaction(chain.ids[1])["state"] == "unclaimed"
    assert chain.changes(db) == []
    assert db.scalar("SELECT COUNT(*) FROM entitlements WHERE original_transaction_id = %s", chain.original_id) == 0

    # The player opens the app: the client posts period 0's JWS.
    assert_verify_answer(verify_jws(api, first, user_id=user), "delivered")
    assert chain.row(db)["user_id"] == user
    assert chain.deliveries(db, 0) == [user] and chain.deliveries(db, 1) == [user]
    assert db.transaction(chain.ids[1])["state"] == "delivered"
    assert chain.changes(db) == [("active", user)]
    assert set(entitled(db, user)) == {PAY_30}


def test_each_renewal_is_delivered_once_when_a_jws_and_its_notification_arrive_at_once(api, db):
    chain, user = Chain(), new_user_id()
    subscribe(api, db, chain, user)
    renewals = [chain.period(index) for index in (1, 2)]
    for index, renewal in enumerate(renewals, start=1):
        def by_notification(_):
            return chain.notify(api, "DID_RENEW", None, renewal, chain.start + index * PERIOD + 1000)

        def by_jws(_):
            return verify_jws(api, renewal, user_id=user).status_code

        with ThreadPoolExecutor(6) as pool:
            results = [pool.submit(by_notification if n % 2 else by_jws, n) for n in range(6)]
            for result in results:
                result.result()
        assert chain.deliveries(db, index) == [user]
    assert chain.row(db)["latest_transaction_id"] == chain.ids[2]
    assert_events_follow_transactions(db, chain.ids.values())


def test_a_renewal_info_not_signed_by_apple_is_refused_and_changes_nothing(api, db):
    chain, user = Chain(), new_user_id()
    subscribe(api, db, chain, user)
    renewal = chain.period(1)
    info = subscription_notifications.renewal_info_for("DID_RENEW", None, renewal)
    forged_info = signed_data.sign(info, CERTS, signing_key=ec.generate_private_key(ec.SECP256R1()))
    payload = notifications.notification("DID_RENEW", signed_data.sign(renewal, CERTS),
                                         signed_renewal_info=forged_info, signed_ms=chain.start + PERIOD + 1000)
    answer = post(api, signed_data.sign(payload, CERTS))
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "invalid_signed_data"
    assert db.transaction(chain.ids[1]) is None
    assert chain.row(db)["latest_transaction_id"] == chain.original_id
    assert db.scalar("SELECT COUNT(*) FROM notifications WHERE notification_uuid = %s",
                     payload["notificationUUID"]) == 0


def receipt_period(receipts, chain, index):
    """Period `index` of `chain` as a receipt's purchase (verifyReceipt's expires_date)."""
    return receipts.purchase(chain.product, transaction_id=chain.ids.setdefault(index, new_transaction_id()),
                             original_transaction_id=chain.original_id, purchase_ms=chain.start + index * PERIOD,
                             expires_ms=chain.start + (index + 1) * PERIOD)


def apple_now_shows(simulator, receipt_data, purchase):
    """From now on verifyReceipt's answer to `receipt_data` lists `purchase` in latest_receipt_info."""
    response = requests.post(simulator.base_url + "/latest_receipt_info",
                             json={"receipt_data": receipt_data, "purchase": purchase}, timeout=10)
    assert response.status_code == 200, response.text


def test_verify_receipts_latest_receipt_info_advances_the_chain_and_delivers_each_renewal_once(
        api, db, simulator, receipts):
    chain, user = Chain(), new_user_id()
    receipt = receipts.app_receipt([receipt_period(receipts, chain, 0)])
    assert_verify_answer(api.verify(receipt, user_id=user), "delivered")
    row = chain.row(db)
    assert (row["user_id"], row["status"], row["latest_transaction_id"]) == (user, "active", chain.original_id)
    assert ms(row["expires_at"]) == chain.start + PERIOD
    assert chain.changes(db) == [("active", user)]

    # Renewed while the app was closed: Apple's answer to the same receipt now shows period 1, and
    # its DID_RENEW arrives at the same moment as the client's verify.
    apple_now_shows(simulator, receipt, receipt_period(receipts, chain, 1))
    renewal = chain.period(1)
    with ThreadPoolExecutor(2) as pool:
        by_receipt = pool.submit(api.verify, receipt, user_id=user, transaction_id=chain.ids[1])
        by_notification = pool.submit(chain.notify, api, "DID_RENEW", None, renewal, chain.start + PERIOD + 1000)
        assert by_receipt.result().status_code == 200, by_receipt.result().text
        by_notification.result()
    assert chain.deliveries(db, 1) == [user]
    row = chain.row(db)
    assert (row["latest_transaction_id"], ms(row["expires_at"])) == (chain.ids[1], chain.start + 2 * PERIOD)
    assert set(entitled(db, user)) == {PAY_30}
    assert_events_follow_transactions(db, chain.ids.values())


def test_a_receipt_showing_a_refunded_latest_period_revokes_the_chain(api, db, simulator, receipts):
    chain, user = Chain(), new_user_id()
    receipt = receipts.app_receipt([receipt_period(receipts, chain, 0)])
    assert_verify_answer(api.verify(receipt, user_id=user), "delivered")
    refunded_period = dict(receipt_period(receipts, chain, 1), cancellation_ms=now_ms() - 1000)
    apple_now_shows(simulator, receipt, refunded_period)
    api.verify(receipt, user_id=user, transaction_id=chain.ids[1])
    assert chain.row(db)["status"] == "revoked"
    assert entitled(db, user) == {}


def test_a_receipt_checked_here_starts_the_chain_from_its_expires_date(tmp_path, db, receipts):
    chain, user = Chain(), new_user_id()
    receipt = receipts.app_receipt([receipt_period(receipts, chain, 0), receipt_period(receipts, chain, 1)])
    local = OwnVerifier(tmp_path, "local")
    try:
        answer = local.verify(receipt, user_id=user)
    finally:
        local.stop()
    assert answer.status == 200 and answer.body["status"] == "delivered", answer.body
    row = chain.row(db)
    assert (row["user_id"], row["status"], row["latest_transaction_id"]) == (user, "active", chain.ids[1])
    assert ms(row["expires_at"]) == chain.start + 2 * PERIOD
    assert chain.deliveries(db, 0) == [user] and chain.deliveries(db, 1) == [user]
    assert chain.changes(db) == [("active", user)]  # one chain, one change, however many periods it shows


def test_a_renewal_apple_could_not_deliver_is_applied_by_notifications_sync(api, db, simulator):
    chain, user = Chain(), new_user_id()
    subscribe(api, db, chain, user)
    renewal = chain.period(1)
    sent = simulator_send(simulator, UNREACHABLE, "DID_RENEW", {
        "product_id": chain.product, "transaction_id": renewal["transactionId"],
        "original_transaction_id": chain.original_id, "type": SUBSCRIPTION, "purchase_ms": renewal["purchaseDate"],
        "expires_ms": renewal["expiresDate"]})
    wait_until(lambda: any(entry["notification_uuid"] == sent["notification_uuid"] and entry["attempts"]
                           for entry in requests.get(f"{simulator.base_url}/notifications/sent", timeout=10).json()),
               10, "Apple's one attempt at the DID_RENEW")
    assert chain.deliveries(db, 1) == []

    synced((datetime.now(timezone.utc) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert chain.deliveries(db, 1) == [user]
    assert chain.row(db)["latest_transaction_id"] == chain.ids[1]
    assert db.one("SELECT source FROM notifications WHERE notification_uuid = %s", sent["notification_uuid"]) == {
        "source": "sync"}


def test_verify_receipts_pending_renewal_info_says_what_renews_and_a_billing_retry(api, db, simulator, receipts):
    chain, user = Chain(start=now_ms() - 2 * PERIOD - 60_000), new_user_id()  # period 1 ended a minute ago
    receipt = receipts.app_receipt([receipt_period(receipts, chain, 0)])
    assert_verify_answer(api.verify(receipt, user_id=user), "delivered")
    assert chain.row(db)["auto_renew"] == 1  # verifyReceipt's pending_renewal_info: auto_renew_status 1

    # Renewed once, then the next renewal failed: Apple's answer shows period 1 and billing retry.
    retry = dict(receipt_period(receipts, chain, 1),
                 pending_renewal={"is_in_billing_retry_period": "1", "auto_renew_status": "1"})
    apple_now_shows(simulator, receipt, retry)
    assert_verify_answer(api.verify(receipt, user_id=user, transaction_id=chain.ids[1]), "delivered")
    row = chain.row(db)
    assert (row["status"], row["latest_transaction_id"]) == ("billing_retry", chain.ids[1])
    assert entitled(db, user) == {}
    assert chain.deliveries(db, 1) == [user]
    assert [c[0] for c in chain.changes(db)] == ["active", "billing_retry"]


def scraped_subscriptions():
    """iap_subscriptions{status} and iap_subscriptions_entitled as /metrics shows them now."""
    text = requests.get(f"http://{os.environ['IAP_METRICS_LISTEN']}/metrics", timeout=10).text
    counts = {status: float(value) for status, value in
              re.findall(r'^iap_subscriptions\{status="(\w+)"\} (\S+)$', text, re.MULTILINE)}
    entitled = re.search(r"^iap_subscriptions_entitled (\S+)$", text, re.MULTILINE)
    return counts, float(entitled.group(1)) if entitled else None


def test_metrics_count_the_chains_by_status_and_those_entitled_now(api, db):
    chain, user = Chain(), new_user_id()
    subscribe(api, db, chain, user)
    send(api, "REVOKE", refunded(chain.period(0), revocation_ms=now_ms()))
    assert chain.row(db)["status"] == "revoked"

    def matches_the_table():
        counts, entitled = scraped_subscriptions()
        stored = {row["status"]: row["n"] for row in db.query(
            "SELECT status, COUNT(*) AS n FROM subscriptions GROUP BY status")}
        return (set(counts) == {"active", "grace_period", "billing_retry", "expired", "revoked"}
                and all(counts[status] == stored.get(status, 0) for status in counts)
                and entitled == db.scalar("SELECT COUNT(*) FROM entitlements"))
    wait_until(matches_the_table, 60, "iap_subscriptions{status} and iap_subscriptions_entitled as the table says")
    assert scraped_subscriptions()[0]["revoked"] >= 1


def test_a_renewal_another_user_posts_goes_to_the_chains_user(api, db):
    chain, user, other = Chain(), new_user_id(), new_user_id()
    subscribe(api, db, chain, user)
    # The same Apple account signed in to another game account: its client posts the renewal.
    body = assert_verify_answer(verify_jws(api, chain.period(1), user_id=other), "already_delivered")
    assert body["transactions"][0]["order_id"] is None, body
    assert chain.deliveries(db, 1) == [user]
    assert db.transaction(chain.ids[1])["user_id"] == user
    assert db.orders_of(other) == []
    assert chain.row(db)["latest_transaction_id"] == chain.ids[1]


def test_a_renewal_only_apples_status_shows_is_delivered_once_by_subscriptions_sync(api, db, simulator):
    """A server down for the renewal and its DID_RENEW: `iapctl subscriptions sync` reads the chain from Get All
    Subscription Statuses, delivers the period it has never stored to the chain's user, and moves the chain."""
    user = new_user_id()
    chain = subscribed(api, simulator, user, purchase_ms=now_ms() - 40 * 60_000, expires_ms=now_ms() - 10 * 60_000)
    renewal_id = new_transaction_id()
    sim_chain(simulator, original_transaction_id=chain["original_transaction_id"], transaction_id=renewal_id,
              purchase_ms=now_ms() - 10 * 60_000, expires_ms=now_ms() + 20 * 60_000)
    for _ in range(2):
        sync_iapctl("subscriptions", "sync", "--user", user)
        delivered = db.query("SELECT user_id FROM events WHERE transaction_id = %s AND type = 'delivered'", renewal_id)
        assert delivered == [{"user_id": user}]
    stored = db.one("SELECT * FROM subscriptions WHERE original_transaction_id = %s", chain["original_transaction_id"])
    assert (stored["latest_transaction_id"], stored["status"]) == (renewal_id, "active")
    assert db.transaction(renewal_id)["state"] == "delivered"
    assert set(entitled(db, user)) == {PAY_30}
