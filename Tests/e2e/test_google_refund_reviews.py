"""docs/events.md "Refund requests" for Google Play: a `pendingRefundReviewNotification` pushed to
POST /v1/notifications/google becomes a consumption_requests row of store google_play (with a
refund_requested event when the order was delivered here), and the refund-request sender answers it
with exactly one orders.reviewrefund at the Google Play double, under the same consent, consumption
and products.refund_preference policy as Apple's requests: DECLINE stays DECLINE, GRANT_FULL is
APPROVE, GRANT_PRORATED and no preference are NEUTRAL.

The purchases are bought at the double and delivered by POST /v1/google/purchases/verify; the review
is opened at the double (POST /refund_reviews on its control port), which hands out the
pendingRefundToken and later shows every reviewrefund answer it received (GET /refund_reviews)."""
import datetime

import pytest
import requests

from support import assert_verify_answer, new_user_id, wait_until
from test_google_notifications import (PACKAGE, developer_notification, new_message_id, push, signed_push, stored,
                                       voided)
from test_refund_request_sender import FINAL, add_product, consent, record_consumption

REASON = "REFUND_REASON_UNWANTED"
POLICIES = ("none", "decline", "grant_full", "grant_prorated", "auto")


@pytest.fixture(scope="module")
def catalog(api, db):
    """A product of each refund_preference, once the service's catalog (refreshed every 2 s) has them."""
    products = {policy: add_product(db, policy) for policy in POLICIES}
    wait_until(lambda: all(api.post_json("/v1/orders", {"user_id": new_user_id(), "product_id": product_id})
                           .status_code == 201 for product_id in products.values()),
               10, "the new products in the service's catalog")
    return products


def bought(google, product_id, **fields):
    answer = requests.post(google + "/purchases", json={"package_name": PACKAGE, "product_id": product_id, **fields},
                           timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()


def delivered_purchase(api, db, google, catalog, policy="none", consented=True, withdrawn=False, consumed=None):
    """A product with `policy`, bought at the double and delivered to a new user here, with the user's
    consent and the game's consumption: (order id at Google, user id)."""
    product_id, user_id = catalog[policy], new_user_id()
    purchase = bought(google, product_id)
    answer = api.post_json("/v1/google/purchases/verify", {
        "package_name": PACKAGE, "product_id": product_id, "purchase_token": purchase["purchase_token"],
        "user_id": user_id})
    assert_verify_answer(answer, "delivered")
    if consented:
        consent(db, user_id, withdrawn)
    if consumed is not None:
        record_consumption(db, purchase["order_id"], consumed)
    return purchase["order_id"], user_id


def open_review(google, order_id):
    answer = requests.post(google + "/refund_reviews", json={"order_id": order_id}, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()["pending_refund_token"]


def review_notification(order_id, token, event_time_ms, account_id=None):
    review = {"pendingRefundToken": token, "orderId": order_id, "refundReason": REASON}
    if account_id is not None:
        review["obfuscatedAccountId"] = account_id
    notification = developer_notification(pendingRefundReviewNotification=review)
    notification["eventTimeMillis"] = str(event_time_ms)
    return notification


def push_review(api, google, order_id, token, message_id=None, times=1, account_id=None, age=None):
    """Pushes the review (`times` times under one message id, as Pub/Sub may), Google having asked `age`
    (a timedelta) ago; returns the message id."""
    message_id = message_id or new_message_id()
    asked = datetime.datetime.now(datetime.timezone.utc) - (age or datetime.timedelta())
    event_time_ms = int(asked.timestamp() * 1000)
    for _ in range(times):
        body, authorization = signed_push(
            google, review_notification(order_id, token, event_time_ms, account_id), message_id=message_id)
        response = push(api, body, authorization)
        assert response.status_code == 204, response.text
    return message_id


def requests_of(db, order_id):
    return db.query("SELECT * FROM consumption_requests WHERE order_id = %s ORDER BY request_id", order_id)


def settled(db, order_id, timeout=60):
    return wait_until(lambda: (rows := requests_of(db, order_id)) and rows[0]["status"] in FINAL and rows[0],
                      timeout, f"the refund review of {order_id} answered")


def answers(google, token):
    reviews = requests.get(google + "/refund_reviews", timeout=10).json()["reviews"]
    return next(review["answers"] for review in reviews if review["pending_refund_token"] == token)


def expected_body(token, preference, consumed=None, sample=False):
    body = {"pendingRefundToken": token, "refundPreference": preference, "sampleContentProvided": sample}
    if consumed is not None:
        body["consumptionPercentageMilliunits"] = consumed
    return body


def test_a_review_becomes_one_request_and_one_event_and_gets_one_answer(api, db, google, catalog):
    order_id, user_id = delivered_purchase(api, db, google, catalog, policy="decline", consumed=40000)
    token = open_review(google, order_id)
    message_id = push_review(api, google, order_id, token, times=2)

    [request] = requests_of(db, order_id)
    assert (request["store"], request["transaction_id"], request["google_message_id"], request["pending_refund_token"],
            request["user_id"], request["reason"], request["notification_uuid"]) == (
        "google_play", order_id, message_id, token, user_id, REASON, None), request
    assert request["deadline_at"] - request["requested_at"] == datetime.timedelta(hours=24)
    assert stored(db, message_id)["effect"] == "refund_requested"
    [event] = db.query("SELECT event_id, type, store, user_id FROM events WHERE transaction_id = %s "
                       "AND type = 'refund_requested'", order_id)
    assert (event["store"], event["user_id"], request["event_id"]) == ("google_play", user_id, event["event_id"])

    answered = settled(db, order_id)
    assert (answered["status"], answered["attempts"], answered["refund_preference_sent"]) == ("sent", 1, "DECLINE")
    assert token not in answered["sent_body"]
    [answer] = answers(google, token)
    assert answer == {"body": expected_body(token, "DECLINE", 40000), "accepted": True}


def test_the_same_review_under_another_message_id_changes_nothing(api, db, google, catalog):
    order_id, _ = delivered_purchase(api, db, google, catalog)
    token = open_review(google, order_id)
    push_review(api, google, order_id, token)
    again = push_review(api, google, order_id, token)
    assert len(requests_of(db, order_id)) == 1
    assert stored(db, again)["effect"] == "unchanged"
    assert db.scalar("SELECT COUNT(*) FROM events WHERE transaction_id = %s AND type = 'refund_requested'",
                     order_id) == 1
    settled(db, order_id)
    assert len(answers(google, token)) == 1


@pytest.mark.parametrize("policy, consumed, preference", [
    ("none", None, "NEUTRAL"),
    ("grant_full", 0, "APPROVE"),
    ("grant_prorated", 40000, "NEUTRAL"),
    ("auto", 100000, "DECLINE"),
])
def test_each_policy_in_googles_words(api, db, google, catalog, policy, consumed, preference):
    order_id, _ = delivered_purchase(api, db, google, catalog, policy=policy, consumed=consumed)
    token = open_review(google, order_id)
    push_review(api, google, order_id, token)
    answered = settled(db, order_id)
    assert (answered["status"], answered["refund_preference_sent"]) == ("sent", preference)
    assert [answer["body"] for answer in answers(google, token)] == [expected_body(token, preference, consumed)]


def test_consent_withdrawn_sends_nothing(api, db, google, catalog):
    order_id, _ = delivered_purchase(api, db, google, catalog, policy="decline", withdrawn=True, consumed=40000)
    token = open_review(google, order_id)
    push_review(api, google, order_id, token)
    assert settled(db, order_id)["status"] == "no_consent"
    assert answers(google, token) == []


def test_a_review_past_its_24_hours_is_not_answered(api, db, google, catalog):
    order_id, _ = delivered_purchase(api, db, google, catalog, policy="decline")
    token = open_review(google, order_id)
    push_review(api, google, order_id, token, age=datetime.timedelta(hours=24, minutes=1))
    answered = settled(db, order_id)
    assert (answered["status"], answered["attempts"], answered["last_error"]) == (
        "expired", 0, "deadline passed before a PUT")
    assert answers(google, token) == []


def test_google_failing_is_retried_and_answered_once(api, db, google, catalog):
    order_id, _ = delivered_purchase(api, db, google, catalog, policy="grant_full")
    token = open_review(google, order_id)
    # The purchase's consume is done first: the next two calls to the API are the review's.
    wait_until(lambda: db.transaction(order_id)["finished_at"], 30, "the purchase consumed at Google")
    faults = requests.post(google + "/control", json={"fault": 503, "fault_next": 2, "fault_on": "api"}, timeout=10)
    assert faults.status_code == 200, faults.text
    push_review(api, google, order_id, token)
    answered = settled(db, order_id)
    assert (answered["status"], answered["attempts"]) == ("sent", 1), answered
    assert [answer["accepted"] for answer in answers(google, token)] == [True]
    calls = [call["status"] for call in requests.get(google + "/calls", timeout=10).json()["calls"]
             if call["endpoint"] == "reviewrefund" and order_id in call["path"]]
    assert calls == [503, 503, 200], calls


def test_a_review_of_an_order_not_delivered_here_is_kept_for_support(api, db, google, catalog, create_order):
    """Its user is the one of our order the purchase's obfuscatedAccountId names; the answer says nothing
    was used (consumption 0), and the policy `auto` asks Google to approve."""
    user_id, product_id = new_user_id(), catalog["auto"]
    our_order = create_order(user_id, product_id)["order_id"]
    consent(db, user_id)
    purchase = bought(google, product_id, obfuscated_account_id=our_order)
    token = open_review(google, purchase["order_id"])
    message_id = push_review(api, google, purchase["order_id"], token, account_id=our_order)

    [request] = requests_of(db, purchase["order_id"])
    assert (request["user_id"], request["product_id"], request["event_id"]) == (user_id, product_id, None)
    assert stored(db, message_id)["effect"] == "refund_requested"
    assert settled(db, purchase["order_id"])["status"] == "sent"
    assert [answer["body"] for answer in answers(google, token)] == [expected_body(token, "APPROVE", 0)]


def test_a_review_naming_nobody_here_is_kept_and_left_unanswered(api, db, google):
    purchase = bought(google, "com.example.game.refund.unknown")
    token = open_review(google, purchase["order_id"])
    push_review(api, google, purchase["order_id"], token)
    answered = settled(db, purchase["order_id"])
    assert (answered["status"], answered["user_id"], answered["product_id"]) == ("no_consent", None, "")
    assert answers(google, token) == []


def test_a_review_another_instance_holds_is_passed_over(api, db, google, catalog):
    """Written as the push writes it but leased by another instance for an hour, and older than a free
    review: a sender that leased it regardless would have answered it first."""
    held_order, user_id = delivered_purchase(api, db, google, catalog, policy="grant_full")
    held_token, message_id = open_review(google, held_order), new_message_id()
    db.execute("INSERT INTO google_notifications (message_id, package_name, kind, order_id, event_time, received_at, "
               "effect) VALUES (%s, %s, 'pendingRefundReview', %s, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), "
               "'refund_requested')", message_id, PACKAGE, held_order)
    db.execute("INSERT INTO consumption_requests (store, transaction_id, original_transaction_id, google_message_id, "
               "pending_refund_token, order_id, environment, user_id, product_id, requested_at, deadline_at, "
               "created_at, lease_expires_at) VALUES ('google_play', %s, %s, %s, %s, %s, 'Production', %s, %s, "
               "UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL 1 DAY, UTC_TIMESTAMP(3), "
               "UTC_TIMESTAMP(3) + INTERVAL 1 HOUR)",
               held_order, held_order, message_id, held_token, held_order, user_id, catalog["grant_full"])
    try:
        lease = requests_of(db, held_order)[0]["lease_expires_at"]
        free_order, _ = delivered_purchase(api, db, google, catalog, policy="grant_full")
        push_review(api, google, free_order, open_review(google, free_order))
        assert settled(db, free_order)["status"] == "sent"
        [untouched] = requests_of(db, held_order)
        assert (untouched["status"], untouched["attempts"], untouched["lease_expires_at"]) == ("pending", 0, lease)
        assert answers(google, held_token) == []
    finally:
        # No instance holds it: left leased, it would look like a call under way to every later test.
        db.execute("DELETE FROM consumption_requests WHERE order_id = %s AND google_message_id = %s",
                   held_order, message_id)


def test_googles_refund_after_a_review_is_its_outcome(api, db, google, catalog):
    order_id, _ = delivered_purchase(api, db, google, catalog, policy="grant_full")
    token = open_review(google, order_id)
    push_review(api, google, order_id, token)
    assert settled(db, order_id)["status"] == "sent"
    purchase_token = db.transaction(order_id)["purchase_token"]
    body, authorization = signed_push(google, voided(purchase_token, order_id))
    assert push(api, body, authorization).status_code == 204
    [request] = requests_of(db, order_id)
    assert (request["status"], request["outcome"]) == ("sent", "refunded"), request
    assert request["outcome_at"] is not None
