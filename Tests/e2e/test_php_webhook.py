"""The PHP library (clients/php) behind real webhook POSTs: an iap-fcgi of the test's own (the stack's
database, IAP_WEBHOOK_URL on loopback) POSTs each event to `php -S` serving
clients/php/tests/Webhook/endpoint.php, which checks the signature with WebhookVerifier and grants
with EventConsumer into the table php_webhook_grants. The endpoint knows two secrets (a rotation);
iap-fcgi signs with the older one.
"""
import hashlib
import hmac
import json
import os
import socket
import subprocess
import time

import pytest
import requests

import game_events
import notification_support as notify
from fastcgi_client import REPO
from support import PAY_6, assert_verify_answer, new_user_id, wait_until, webhook_service

SECRET = "whsec-php-e2e-0123456789abcdef"
NEW_SECRET = "whsec-php-e2e-rotated-00000000"
ENDPOINT = REPO / "clients" / "php" / "tests" / "Webhook" / "endpoint.php"
EVENT_CONSUMER_TABLE = REPO / "clients" / "php" / "sql" / "event_consumer.sql"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def php_endpoint(db, tmp_path_factory):
    """`php -S` serving the endpoint; its URL."""
    db.execute("DROP TABLE IF EXISTS php_webhook_grants")
    db.execute("""CREATE TABLE php_webhook_grants (
        grant_id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, event_id BIGINT UNSIGNED NOT NULL,
        user_id VARCHAR(64) NOT NULL, product_id VARCHAR(128) NOT NULL, action VARCHAR(32) NOT NULL,
        share_milli INT NULL, quantity VARCHAR(32) NULL, detail VARCHAR(32) NULL, KEY (event_id))""")
    db.execute(EVENT_CONSUMER_TABLE.read_text())
    port = free_port()
    log = tmp_path_factory.mktemp("php-webhook") / "php-server.log"
    with open(log, "ab") as output:
        server = subprocess.Popen(["php", "-S", f"127.0.0.1:{port}", str(ENDPOINT)], stdin=subprocess.DEVNULL,
                                  stdout=output, stderr=output,
                                  env=dict(os.environ, GAME_WEBHOOK_SECRETS=f"{NEW_SECRET},{SECRET}"))
    try:
        wait_until(lambda: server.poll() is None and connectable(port), 30, f"php -S on port {port}")
        yield f"http://127.0.0.1:{port}/iap/events"
    finally:
        server.terminate()
        server.wait(timeout=30)


def connectable(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def dispatcher(php_endpoint, db, tmp_path_factory):
    """An iap-fcgi whose webhook is the PHP endpoint. Events earlier tests left were pulled: consumed
    first, and marked sent (support.webhook_service), so that only this module's are POSTed."""
    db.execute("UPDATE events SET consumed_at = UTC_TIMESTAMP(3) WHERE consumed_at IS NULL")
    with webhook_service(db, tmp_path_factory.mktemp("php-webhook-service"), php_endpoint, SECRET,
                         "php-webhook") as log:
        yield log


def sent(db, event_id):
    wait_until(lambda: db.scalar("SELECT status FROM events WHERE event_id = %s", event_id) == "sent", 60,
               f"event {event_id} acknowledged by the PHP endpoint")


def grants_of(db, event_id):
    return [(row["action"], row["share_milli"], row["user_id"]) for row in
            db.query("SELECT * FROM php_webhook_grants WHERE event_id = %s ORDER BY grant_id", event_id)]


def test_a_delivery_is_granted_once_even_when_posted_again(api, db, receipts, dispatcher, iapctl):
    user_id = new_user_id()
    purchase = receipts.purchase(PAY_6)
    assert_verify_answer(api.verify(receipts.app_receipt([purchase]), user_id=user_id), "delivered")
    [row] = db.query("SELECT event_id FROM events WHERE user_id = %s", user_id)
    sent(db, row["event_id"])
    assert grants_of(db, row["event_id"]) == [("grant", 100000, user_id)]
    assert db.scalar("SELECT consumed_at FROM events WHERE event_id = %s", row["event_id"]) is not None

    # The same event POSTed again (iapctl events redeliver): acknowledged, nothing granted twice.
    assert iapctl("events", "redeliver", str(row["event_id"])).split() == [str(row["event_id"]), "pending"]
    wait_until(lambda: db.scalar("SELECT status = 'sent' AND sent_at >= redelivered_at FROM events WHERE event_id = %s",
                                 row["event_id"]), 60,
               "the redelivered POST acknowledged")
    assert grants_of(db, row["event_id"]) == [("grant", 100000, user_id)]


def test_a_prorated_refund_takes_back_its_share(api, db, dispatcher):
    user_id = new_user_id()
    payload, _ = notify.deliver_by_verify(api, db, user_id)
    transaction_id = payload["transactionId"]
    notify.send(api, "REFUND", notify.refunded(payload, revocation_type="REFUND_PRORATED", percentage=40000))
    delivered, refunded = db.query("SELECT event_id, type FROM events WHERE transaction_id = %s ORDER BY event_id",
                                   transaction_id)
    assert (delivered["type"], refunded["type"]) == ("delivered", "refunded")
    sent(db, refunded["event_id"])
    assert grants_of(db, delivered["event_id"]) == [("grant", 100000, user_id)]
    assert grants_of(db, refunded["event_id"]) == [("take_back", 40000, user_id)]


def handled(db, event_id):
    """What the endpoint did with the event: (action, Grant::quantity() as PHP wrote it, the store) per grant,
    (subscription_changed, None, the chain's status) per subscription change its handler was told of."""
    return [(row["action"], row["quantity"], row["detail"]) for row in
            db.query("SELECT * FROM php_webhook_grants WHERE event_id = %s ORDER BY grant_id", event_id)]


def test_a_google_partial_refund_takes_back_only_the_refunded_quantity(api, db, google, dispatcher):
    """2 of a Google Play purchase of 5 refunded (the refund's rows written as a voided purchase writes them):
    the game takes back 2, not all of them."""
    user_id = new_user_id()
    game_events.deliver_on_google_play(api, google, user_id, quantity=5)
    [delivered] = db.query("SELECT * FROM events WHERE user_id = %s", user_id)
    refunded_id = game_events.refund_partly(db, delivered, 2)
    sent(db, refunded_id)
    assert handled(db, delivered["event_id"]) == [("grant", "5", "google_play")]
    assert handled(db, refunded_id) == [("take_back", "2", "google_play")]
    assert grants_of(db, refunded_id) == [("take_back", 40000, user_id)]


def test_a_subscription_change_reaches_the_games_handler_once(api, db, dispatcher, iapctl):
    """SUBSCRIBED: the period's delivery is a grant; the chain's subscription_changed goes to the handler
    the game registered (onSubscriptionChanged) with its status, not to the grant, and once."""
    user_id = new_user_id()
    game_events.subscribe(api, user_id)
    delivered, changed = db.query("SELECT event_id, type FROM events WHERE user_id = %s ORDER BY event_id", user_id)
    assert (delivered["type"], changed["type"]) == ("delivered", "subscription_changed")
    sent(db, changed["event_id"])
    assert handled(db, delivered["event_id"]) == [("grant", "1", "app_store")]
    assert handled(db, changed["event_id"]) == [("subscription_changed", None, "active")]

    assert iapctl("events", "redeliver", str(changed["event_id"])).split() == [str(changed["event_id"]), "pending"]
    wait_until(lambda: db.scalar("SELECT status = 'sent' AND sent_at >= redelivered_at FROM events WHERE event_id = %s",
                                 changed["event_id"]), 60, "the redelivered POST acknowledged")
    assert handled(db, changed["event_id"]) == [("subscription_changed", None, "active")]


def signature(body, secret, at=None):
    """X-IAP-Signature as iap-fcgi writes it."""
    at = int(time.time()) if at is None else at
    return f"t={at},v1=" + hmac.new(secret.encode(), f"{at}.".encode() + body, hashlib.sha256).hexdigest()


def signed_post(url, body, secret, at=None):
    return requests.post(url, data=body, headers={"X-IAP-Signature": signature(body, secret, at)}, timeout=30)


def test_a_forged_or_stale_post_is_refused_and_grants_nothing(db, php_endpoint):
    body = json.dumps({"event_id": 1, "type": "delivered", "occurred_at": "2026-11-28T08:00:00Z",
                       "environment": "Production",
                       "transaction": {"transaction_id": "1", "original_transaction_id": "1", "product_id": PAY_6,
                                       "quantity": 1},
                       "order": {"order_id": "o", "user_id": "u", "product_id": PAY_6}}).encode()
    before = db.scalar("SELECT COUNT(*) FROM php_webhook_grants")
    forged = signed_post(php_endpoint, body, "whsec-not-the-games-secret-0000")
    assert (forged.status_code, forged.text) == (401, "signature_mismatch")
    stale = signed_post(php_endpoint, body, SECRET, at=int(time.time()) - 3600)
    assert (stale.status_code, stale.text) == (401, "timestamp_outside_tolerance")
    tampered = requests.post(php_endpoint, data=body.replace(b'"quantity": 1', b'"quantity": 9'),
                             headers={"X-IAP-Signature": signature(body, SECRET)}, timeout=30)
    assert (tampered.status_code, tampered.text) == (401, "signature_mismatch")
    assert db.scalar("SELECT COUNT(*) FROM php_webhook_grants") == before


def test_a_refund_request_is_answered_with_the_recorded_consumption(db, php_endpoint):
    """The answer iap-fcgi reads from a refund_requested POST (docs/events.md "Refund requests"). The event is the
    test's own (signed here with the new secret): nothing in this branch emits refund_requested yet."""
    transaction_id = "1000000%09d" % (int(time.time() * 1000) % 10 ** 9)
    db.execute("INSERT INTO consumption (transaction_id, consumed_milli, updated_at) VALUES (%s, 60000, UTC_TIMESTAMP(3))",
               transaction_id)
    body = json.dumps({"event_id": 2 ** 40 + int(time.time()), "type": "refund_requested",
                       "occurred_at": "2026-11-28T08:00:00Z", "environment": "Production",
                       "transaction": {"transaction_id": transaction_id, "original_transaction_id": transaction_id,
                                       "product_id": PAY_6, "quantity": 1},
                       "order": {"order_id": "o", "user_id": "u", "product_id": PAY_6},
                       "refund_request": {"reason": "UNINTENDED_PURCHASE", "deadline_at": "2026-11-28T20:00:00Z"}}).encode()
    answer = signed_post(php_endpoint, body, NEW_SECRET)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"consumption_percentage": 60000}


def test_an_event_of_a_type_the_library_does_not_know_is_acknowledged(db, php_endpoint):
    """A newer iap-fcgi's type (here gift_received) is genuine: answered 2xx, so that it is not sent again
    for 72 hours while the player's later events wait; nothing is granted."""
    body = json.dumps({"event_id": 2 ** 41 + int(time.time()), "type": "gift_received",
                       "occurred_at": "2026-11-28T08:00:00Z", "environment": "Production",
                       "transaction": {"transaction_id": "1", "original_transaction_id": "1", "product_id": PAY_6,
                                       "quantity": 1},
                       "order": {"order_id": "o", "user_id": "u", "product_id": PAY_6}}).encode()
    before = db.scalar("SELECT COUNT(*) FROM php_webhook_grants")
    answer = signed_post(php_endpoint, body, SECRET)
    assert answer.status_code == 204, answer.text
    assert db.scalar("SELECT COUNT(*) FROM php_webhook_grants") == before
