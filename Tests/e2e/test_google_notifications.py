"""docs/api.md "POST /v1/notifications/google": Google Play's real-time developer notifications, pushed by
Cloud Pub/Sub with an OIDC token. The Google Play double (Tests/Simulator/googleplay_sim.py) signs
pushes with the key its JWKS publishes (`trusted`) or one it does not (`untrusted`); the service
fetches that JWKS over TLS. A push that does not authenticate is 401 with nothing stored; one that does
is stored once per messageId, with its effect, before the 204. A full void of a Google purchase
delivered by POST /v1/google/purchases/verify refunds it as Apple's REFUND does."""
import hashlib
import time
import uuid

import pytest
import requests

from notification_support import event_invariant_violations
from support import PAY_6, assert_verify_answer, new_user_id

PACKAGE = "com.example.game"
ROUTE = "/v1/notifications/google"


def new_message_id():
    return str(uuid.uuid4().int % 10**16)


def developer_notification(package=PACKAGE, **kind):
    return {"version": "1.0", "packageName": package, "eventTimeMillis": str(int(time.time() * 1000)),
            **(kind or {"testNotification": {"version": "1.0"}})}


def signed_push(google, notification, key="trusted", claims=None, message_id=None):
    """(body, Authorization header) of a push the double signs."""
    answer = requests.post(google + "/push/sign", json={
        "key": key, "claims": claims or {}, "notification": notification,
        "message_id": message_id or new_message_id()}, timeout=10)
    assert answer.status_code == 200, answer.text
    document = answer.json()
    return document["body"], document["authorization"]


def push(api, body, authorization):
    return api.request("POST", ROUTE, json=body, headers={"Authorization": authorization})


def stored(db, message_id):
    return db.one("SELECT * FROM google_notifications WHERE message_id = %s", message_id)


def test_a_trusted_push_is_stored_before_the_204(api, db, google):
    body, authorization = signed_push(google, developer_notification())
    response = push(api, body, authorization)
    assert response.status_code == 204, response.text
    row = stored(db, body["message"]["messageId"])
    assert (row["package_name"], row["kind"], row["effect"]) == (PACKAGE, "test", "stored"), row


@pytest.mark.parametrize("key, claims", [
    ("untrusted", {}),
    ("trusted", {"aud": "https://someone-else.example.com/push"}),
    ("trusted", {"email": "intruder@evil.iam.gserviceaccount.com"}),
    ("trusted", {"email_verified": False}),
    ("trusted", {"iat": int(time.time()) - 7200, "exp": int(time.time()) - 3600}),
], ids=["untrusted-key", "wrong-aud", "wrong-email", "email-not-verified", "expired"])
def test_a_push_that_does_not_authenticate_is_401_and_stores_nothing(api, db, google, key, claims):
    body, authorization = signed_push(google, developer_notification(), key=key, claims=claims)
    response = push(api, body, authorization)
    assert response.status_code == 401, response.text
    assert response.json()["error"]["code"] == "unauthorized"
    assert stored(db, body["message"]["messageId"]) is None


def test_a_push_without_a_token_is_401(api, db, google):
    body, _ = signed_push(google, developer_notification())
    response = api.request("POST", ROUTE, json=body)
    assert response.status_code == 401, response.text
    assert stored(db, body["message"]["messageId"]) is None


def test_the_same_message_twice_is_one_row(api, db, google):
    message_id = new_message_id()
    for _ in range(2):
        body, authorization = signed_push(
            google, developer_notification(subscriptionNotification={"version": "1.0"}), message_id=message_id)
        assert push(api, body, authorization).status_code == 204
    assert db.scalar("SELECT COUNT(*) FROM google_notifications WHERE message_id = %s", message_id) == 1
    assert stored(db, message_id)["kind"] == "subscription"


def test_a_package_not_configured_is_stored_ignored(api, db, google):
    token = "tok-" + uuid.uuid4().hex
    body, authorization = signed_push(google, developer_notification(
        package="com.example.not-ours",
        voidedPurchaseNotification={"purchaseToken": token, "orderId": "GPA.0000-0000-0000-00000",
                                    "productType": 2, "refundType": 1}))
    assert push(api, body, authorization).status_code == 204
    assert stored(db, body["message"]["messageId"])["effect"] == "ignored"


def delivered_google_purchase(api, db, google):
    """A purchase at the Google Play double, delivered to a new user's order by
    POST /v1/google/purchases/verify: (order_id, transaction_id, purchase_token)."""
    bought = requests.post(google + "/purchases", json={"package_name": PACKAGE, "product_id": PAY_6}, timeout=10)
    assert bought.status_code == 200, bought.text
    token = bought.json()["purchase_token"]
    answer = api.post_json("/v1/google/purchases/verify", {
        "package_name": PACKAGE, "product_id": PAY_6, "purchase_token": token, "user_id": new_user_id()})
    body = assert_verify_answer(answer, "delivered")
    [entry] = body["transactions"]
    return body["order_id"], entry["transaction_id"], token


def voided(token, order_id, refund_type=1):
    return developer_notification(voidedPurchaseNotification={
        "purchaseToken": token, "orderId": order_id, "productType": 2, "refundType": refund_type})


def test_a_full_void_refunds_the_delivered_purchase_once(api, db, google):
    order_id, transaction_id, token = delivered_google_purchase(api, db, google)
    message_id = new_message_id()
    for _ in range(2):   # Pub/Sub pushes at least once
        body, authorization = signed_push(google, voided(token, transaction_id), message_id=message_id)
        assert push(api, body, authorization).status_code == 204
    # Another message telling the same refund (voided-sync, a second publish) changes nothing more.
    again, authorization = signed_push(google, voided(token, transaction_id))
    assert push(api, again, authorization).status_code == 204

    row = db.transaction(transaction_id)
    assert (row["state"], row["store"]) == ("refunded", "google_play"), row
    assert row["cancellation_date"] is not None
    assert db.order(order_id)["status"] == "refunded"
    events = db.query(
        "SELECT type, store, order_id FROM events WHERE transaction_id = %s ORDER BY event_id", transaction_id)
    assert events == [{"type": kind, "store": "google_play", "order_id": order_id}
                      for kind in ("delivered", "refunded")], events
    assert stored(db, message_id)["effect"] == "refunded"
    assert stored(db, again["message"]["messageId"])["effect"] == "unchanged"
    assert stored(db, message_id)["purchase_token_sha256"] == hashlib.sha256(token.encode()).hexdigest()
    assert event_invariant_violations(db) == []


def test_a_partial_void_google_does_not_list_yet_is_stored_and_takes_nothing_back(api, db, google):
    order_id, transaction_id, token = delivered_google_purchase(api, db, google)
    body, authorization = signed_push(google, voided(token, transaction_id, refund_type=2))
    assert push(api, body, authorization).status_code == 204
    assert stored(db, body["message"]["messageId"])["effect"] == "stored"
    assert db.transaction(transaction_id)["state"] == "delivered"
    assert db.scalar("SELECT COUNT(*) FROM events WHERE transaction_id = %s AND type = 'refunded'",
                     transaction_id) == 0


def jwks_fetches(google):
    calls = requests.get(google + "/calls", timeout=10).json()["calls"]
    return sum(1 for call in calls if call["endpoint"] == "jwks")


def test_unknown_key_ids_fetch_the_keys_at_most_once_a_minute(api, db, google):
    # A trusted push first: Google's keys are held from here on.
    body, authorization = signed_push(google, developer_notification())
    assert push(api, body, authorization).status_code == 204
    before = jwks_fetches(google)
    for _ in range(5):
        body, authorization = signed_push(google, developer_notification(), key="untrusted")
        assert push(api, body, authorization).status_code == 401
    assert jwks_fetches(google) - before <= 1
    # The keys held still check trusted pushes without a fetch.
    body, authorization = signed_push(google, developer_notification())
    assert push(api, body, authorization).status_code == 204


def test_without_the_push_settings_the_route_is_not_configured(api, db, google, stack):
    body, authorization = signed_push(google, developer_notification())
    stack("stop iap-fcgi")
    stack("start iap-fcgi", IAP_GOOGLE_PUSH_AUDIENCE="", IAP_GOOGLE_PUSH_SERVICE_ACCOUNT="")
    try:
        response = push(api, body, authorization)
        assert response.status_code == 503, response.text
        assert response.json()["error"]["code"] == "google_not_configured"
        assert stored(db, body["message"]["messageId"]) is None
    finally:
        stack("stop iap-fcgi")
        stack("start iap-fcgi")
    assert push(api, body, authorization).status_code == 204


def test_a_full_void_finds_the_purchase_by_its_order_id_when_the_token_is_not_stored(api, db, google):
    order_id, transaction_id, _ = delivered_google_purchase(api, db, google)
    body, authorization = signed_push(google, voided("another-token-" + uuid.uuid4().hex, transaction_id))
    assert push(api, body, authorization).status_code == 204
    assert stored(db, body["message"]["messageId"])["effect"] == "refunded"
    assert db.transaction(transaction_id)["state"] == "refunded"
    assert db.order(order_id)["status"] == "refunded"
