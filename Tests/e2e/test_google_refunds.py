"""docs/api.md "POST /v1/notifications/google" (voidedPurchaseNotification) and docs/iapctl.md `iapctl google
voided-sync`: Google Play refunds on the ledger. A quantity-based partial refund (refundType 2) reads its
quantity from voidedpurchases at the Google Play double and takes back only that many: refunded_quantity
on the transaction, a `refunded` event carrying it, the transaction delivered while some is left. Each
voided purchase is applied exactly once, whether pushed again under a new messageId or listed again by
voided-sync; voided-sync applies what no push told of, reading every page."""
import math

import requests

from notification_support import event_invariant_violations
from support import assert_verify_answer, new_user_id
from test_google_notifications import PACKAGE, developer_notification, push, signed_push, stored
from test_google_purchases import purchase, verify
from test_server_api import run_iapctl


def delivered(api, google, quantity):
    """A purchase of `quantity` at the double, delivered to a new user: (order_id, transaction_id, token)."""
    bought = purchase(google, quantity=quantity)
    body = assert_verify_answer(verify(api, bought["purchase_token"], new_user_id()), "delivered")
    [entry] = body["transactions"]
    return body["order_id"], entry["transaction_id"], bought["purchase_token"]


def void_at_google(google, token, quantity=None):
    """Google voids the purchase (in part with `quantity`): voidedpurchases lists it from now on."""
    fields = {"purchase_token": token} | ({"voided_quantity": quantity} if quantity else {})
    answer = requests.post(google + "/voided", json=fields, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()


def pushed_partial_refund(api, google, token, transaction_id):
    """A refundType 2 push of the purchase, under a new messageId: (its message id, the response)."""
    body, authorization = signed_push(google, developer_notification(voidedPurchaseNotification={
        "purchaseToken": token, "orderId": transaction_id, "productType": 2, "refundType": 2}))
    return body["message"]["messageId"], push(api, body, authorization)


def refunded_events(db, transaction_id):
    return db.query("SELECT order_id, quantity, refunded_quantity, store FROM events"
                    " WHERE transaction_id = %s AND type = 'refunded' ORDER BY event_id", transaction_id)


def test_a_partial_refund_takes_back_its_quantity_once_and_the_rest_stays(api, db, google):
    order_id, transaction_id, token = delivered(api, google, quantity=5)
    void_at_google(google, token, quantity=2)

    message_id, response = pushed_partial_refund(api, google, token, transaction_id)
    assert response.status_code == 204, response.text
    row = db.transaction(transaction_id)
    assert (row["state"], row["quantity"], row["refunded_quantity"]) == ("delivered", 5, 2), row
    assert db.order(order_id)["status"] != "refunded"
    assert refunded_events(db, transaction_id) == [
        {"order_id": order_id, "quantity": 5, "refunded_quantity": 2, "store": "google_play"}]
    assert stored(db, message_id)["effect"] == "partly_refunded"

    # The same voided purchase told again under a new messageId changes nothing.
    again, response = pushed_partial_refund(api, google, token, transaction_id)
    assert response.status_code == 204, response.text
    assert db.transaction(transaction_id)["refunded_quantity"] == 2
    assert len(refunded_events(db, transaction_id)) == 1
    assert stored(db, again)["effect"] == "unchanged"

    # Google refunds the 3 left: the transaction and its order are refunded, the event says 3.
    void_at_google(google, token, quantity=3)
    last, response = pushed_partial_refund(api, google, token, transaction_id)
    assert response.status_code == 204, response.text
    row = db.transaction(transaction_id)
    assert (row["state"], row["refunded_quantity"]) == ("refunded", 5), row
    assert db.order(order_id)["status"] == "refunded"
    assert [event["refunded_quantity"] for event in refunded_events(db, transaction_id)] == [2, 3]
    assert stored(db, last)["effect"] == "refunded"
    assert event_invariant_violations(db) == []


def test_a_full_refund_still_refunds_the_whole_purchase(api, db, google):
    order_id, transaction_id, token = delivered(api, google, quantity=3)
    body, authorization = signed_push(google, developer_notification(voidedPurchaseNotification={
        "purchaseToken": token, "orderId": transaction_id, "productType": 2, "refundType": 1}))
    assert push(api, body, authorization).status_code == 204
    row = db.transaction(transaction_id)
    assert (row["state"], row["refunded_quantity"]) == ("refunded", 0), row
    assert db.order(order_id)["status"] == "refunded"
    assert refunded_events(db, transaction_id) == [
        {"order_id": order_id, "quantity": 3, "refunded_quantity": None, "store": "google_play"}]


def test_a_partial_refund_push_google_cannot_answer_is_503_and_stores_nothing(api, db, google):
    _, transaction_id, token = delivered(api, google, quantity=4)
    void_at_google(google, token, quantity=1)
    body, authorization = signed_push(google, developer_notification(voidedPurchaseNotification={
        "purchaseToken": token, "orderId": transaction_id, "productType": 2, "refundType": 2}))
    requests.post(google + "/control", json={"fault": 401, "fault_on": "api"}, timeout=10).raise_for_status()
    try:
        response = push(api, body, authorization)
    finally:
        requests.post(google + "/control", json={"fault": None}, timeout=10).raise_for_status()
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "google_unavailable"
    assert stored(db, body["message"]["messageId"]) is None
    assert db.transaction(transaction_id)["refunded_quantity"] == 0
    # Pub/Sub pushes it again, and Google answers now.
    assert push(api, body, authorization).status_code == 204
    assert db.transaction(transaction_id)["refunded_quantity"] == 1


def voidedpurchases_calls(google):
    calls = requests.get(google + "/calls", timeout=10).json()["calls"]
    return [call for call in calls if call["endpoint"] == "voidedpurchases"]


def test_voided_sync_applies_what_no_push_told_reading_every_page_and_again_changes_nothing(
        api, db, google, iapctl):
    purchases = [delivered(api, google, quantity=3) for _ in range(3)]
    (_, whole_id, whole_token), (_, part_id, part_token), (_, last_id, last_token) = purchases
    void_at_google(google, whole_token)
    void_at_google(google, part_token, quantity=1)
    void_at_google(google, last_token, quantity=2)
    requests.post(google + "/calls/reset", timeout=10).raise_for_status()
    requests.post(google + "/control", json={"voided_page_size": 2}, timeout=10).raise_for_status()
    try:
        output = iapctl("google", "voided-sync")
    finally:
        requests.post(google + "/control", json={"voided_page_size": 1000}, timeout=10).raise_for_status()

    listed = int(output.rsplit("listed ", 1)[1].split(",")[0])
    assert listed >= 3, output
    calls = voidedpurchases_calls(google)
    assert len(calls) == math.ceil(listed / 2), (listed, [call["query"] for call in calls])
    assert all("includeQuantityBasedPartialRefund=true" in call["query"] and "type=0" in call["query"]
               for call in calls[:1]), calls[:1]
    assert f"{whole_id}: refunded" in output and f"{part_id}: 1 of 3 refunded" in output, output
    assert f"{last_id}: 2 of 3 refunded" in output, output
    assert db.transaction(whole_id)["state"] == "refunded"
    assert (db.transaction(part_id)["state"], db.transaction(part_id)["refunded_quantity"]) == ("delivered", 1)
    assert db.transaction(last_id)["refunded_quantity"] == 2
    events_before = db.scalar("SELECT COUNT(*) FROM events WHERE type = 'refunded'")

    second = iapctl("google", "voided-sync")
    assert ", applied 0," in second, second
    assert db.scalar("SELECT COUNT(*) FROM events WHERE type = 'refunded'") == events_before
    assert db.transaction(part_id)["refunded_quantity"] == 1
    # A push telling of a refund the sync applied changes nothing either.
    message_id, response = pushed_partial_refund(api, google, part_token, part_id)
    assert response.status_code == 204 and stored(db, message_id)["effect"] == "unchanged"
    assert db.transaction(part_id)["refunded_quantity"] == 1
    assert event_invariant_violations(db) == []


def test_voided_sync_refuses_what_it_cannot_do_with_a_message_and_a_failing_status():
    status, _, stderr, _ = run_iapctl("google", "voided-sync", "--since", "2000-01-01")
    assert status != 0 and "30 days" in stderr, (status, stderr)
    status, _, stderr, _ = run_iapctl("google", "voided-sync", IAP_GOOGLE_PACKAGES=None)
    assert status != 0 and "IAP_GOOGLE_PACKAGES" in stderr, (status, stderr)
