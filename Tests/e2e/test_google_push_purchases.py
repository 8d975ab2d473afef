"""docs/api.md "POST /v1/notifications/google": a PURCHASED push (oneTimeProductNotification 1) reads the
purchase from the Google Play double with productsv2 and delivers it exactly once, as a verify does, to the
order its obfuscatedExternalAccountId names; a paid purchase naming no order here waits `unclaimed` for the
first verify that shows it; a purchase Google still has PENDING is never delivered; CANCELED (2) is stored.
And docs/tables.md `products.type`: a product that is not consumable is acknowledged at Google, never
consumed."""
import hashlib
import uuid

import requests

from support import PAY_6, assert_verify_answer, new_user_id, wait_until
from test_google_notifications import PACKAGE, developer_notification, new_message_id, push, signed_push
from test_google_purchases import at_google, calls, purchase

VERIFY = "/v1/google/purchases/verify"


def one_time_product(bought, notification_type):
    return developer_notification(oneTimeProductNotification={
        "version": "1.0", "notificationType": notification_type, "purchaseToken": bought["purchase_token"],
        "sku": bought["product_id"]})


def pushed(api, google, notification, message_id=None):
    """Pushes `notification` signed by Google's key; returns its message id once answered 204."""
    body, authorization = signed_push(google, notification, message_id=message_id)
    response = push(api, body, authorization)
    assert response.status_code == 204, response.text
    return body["message"]["messageId"]


def effect(db, message_id):
    return db.scalar("SELECT effect FROM google_notifications WHERE message_id = %s", message_id)


def stored_purchase(db, token):
    return db.one("SELECT * FROM transactions WHERE purchase_token_sha256 = %s",
                  hashlib.sha256(token.encode()).hexdigest())


def delivered_events(db, transaction_id):
    return db.scalar("SELECT COUNT(*) FROM events WHERE transaction_id = %s AND type = 'delivered'", transaction_id)


def verify(api, bought, user_id, **fields):
    return api.post_json(VERIFY, {"package_name": PACKAGE, "product_id": bought["product_id"],
                                  "purchase_token": bought["purchase_token"], "user_id": user_id, **fields})


def test_a_purchased_push_naming_an_order_delivers_it_once(api, db, google, create_order):
    owner = new_user_id()
    order = create_order(owner, PAY_6)["order_id"]
    bought = purchase(google, obfuscated_account_id=order)
    message_id = new_message_id()
    for _ in range(2):   # Pub/Sub pushes at least once
        pushed(api, google, one_time_product(bought, 1), message_id=message_id)
    assert effect(db, message_id) == "delivered"
    row = stored_purchase(db, bought["purchase_token"])
    assert (row["transaction_id"], row["store"], row["state"], row["order_id"], row["user_id"]) == \
        (bought["order_id"], "google_play", "delivered", order, owner), row
    assert db.order(order)["status"] == "delivered"
    assert delivered_events(db, bought["order_id"]) == 1
    assert db.scalar("SELECT store FROM events WHERE transaction_id = %s", bought["order_id"]) == "google_play"
    # Another message about the same purchase changes nothing; the app's verify is answered from the ledger.
    assert effect(db, pushed(api, google, one_time_product(bought, 1))) == "unchanged"
    body = assert_verify_answer(verify(api, bought, owner, order_id=order), "already_delivered")
    assert body["transactions"][0]["order_id"] == order, body
    assert delivered_events(db, bought["order_id"]) == 1
    wait_until(lambda: at_google(google, bought["purchase_token"])["consumed"], 10, "the purchase consumed at Google")


def test_a_purchased_push_naming_no_order_is_unclaimed_until_a_verify_delivers_it(api, db, google):
    bought = purchase(google)
    assert effect(db, pushed(api, google, one_time_product(bought, 1))) == "unclaimed"
    row = stored_purchase(db, bought["purchase_token"])
    assert (row["transaction_id"], row["store"], row["state"], row["order_id"], row["user_id"]) == \
        (bought["order_id"], "google_play", "unclaimed", None, None), row
    assert delivered_events(db, bought["order_id"]) == 0
    # Nothing owed to Google yet: a purchase no app claims is refunded by Google rather than kept.
    assert db.scalar("SELECT COUNT(*) FROM google_finishes WHERE transaction_id = %s", bought["order_id"]) == 0

    user = new_user_id()
    body = assert_verify_answer(verify(api, bought, user), "delivered")
    row = stored_purchase(db, bought["purchase_token"])
    assert (row["state"], row["user_id"], row["order_id"]) == ("delivered", user, body["order_id"]), row
    assert delivered_events(db, bought["order_id"]) == 1
    assert db.scalar("SELECT store FROM events WHERE transaction_id = %s", bought["order_id"]) == "google_play"
    assert_verify_answer(verify(api, bought, new_user_id()), "already_delivered")
    wait_until(lambda: at_google(google, bought["purchase_token"])["consumed"], 10, "the purchase consumed at Google")


def test_a_purchase_google_has_pending_is_never_delivered_by_its_push(api, db, google, create_order):
    owner = new_user_id()
    order = create_order(owner, PAY_6)["order_id"]
    bought = purchase(google, obfuscated_account_id=order, state="PENDING")
    assert effect(db, pushed(api, google, one_time_product(bought, 1))) == "pending"
    assert stored_purchase(db, bought["purchase_token"]) is None
    assert db.order(order)["status"] == "created"
    # Paid at the shop later: Google's next PURCHASED push delivers it.
    requests.post(google + "/purchases/update", json={"purchase_token": bought["purchase_token"],
                                                      "state": "PURCHASED"}, timeout=10).raise_for_status()
    assert effect(db, pushed(api, google, one_time_product(bought, 1))) == "delivered"
    assert stored_purchase(db, bought["purchase_token"])["order_id"] == order


def test_a_canceled_push_is_stored_and_delivers_nothing(api, db, google, create_order):
    owner = new_user_id()
    order = create_order(owner, PAY_6)["order_id"]
    bought = purchase(google, obfuscated_account_id=order, state="CANCELLED")
    message_id = pushed(api, google, one_time_product(bought, 2))
    row = db.one("SELECT * FROM google_notifications WHERE message_id = %s", message_id)
    assert (row["kind"], row["effect"], row["purchase_token_sha256"]) == \
        ("oneTimeProductCanceled", "cancelled", hashlib.sha256(bought["purchase_token"].encode()).hexdigest()), row
    assert stored_purchase(db, bought["purchase_token"]) is None
    assert db.order(order)["status"] == "created"


def test_a_product_that_is_not_consumable_is_acknowledged_not_consumed(api, db, google, iapctl):
    product_id = f"com.example.game.unlock.{uuid.uuid4().hex[:12]}"
    iapctl("products", "add", product_id, "--price", "6.00", "--title", "level pack", "--type", "non_consumable")
    assert f"{product_id}\t6.00\tCNY\tactive\tnon_consumable\tlevel pack" in iapctl("products", "list")
    # Changed without --type, it keeps its type.
    iapctl("products", "add", product_id, "--price", "6.00", "--title", "level pack")
    assert db.scalar("SELECT type FROM products WHERE product_id = %s", product_id) == "non_consumable"
    bought = purchase(google, product_id=product_id)
    user = new_user_id()

    def delivered():
        answer = verify(api, bought, user)
        return answer if answer.json()["status"] == "delivered" else None

    # The service reads the catalog every 2 seconds: until then the product is rejected, nothing stored.
    assert_verify_answer(wait_until(delivered, 10, "the new product delivered"), "delivered")
    wait_until(lambda: at_google(google, bought["purchase_token"])["acknowledged"], 10,
               "the purchase acknowledged at Google")
    assert at_google(google, bought["purchase_token"])["consumed"] is False
    assert [c["status"] for c in calls(google, "acknowledge", bought["purchase_token"])] == [200]
    assert calls(google, "consume", bought["purchase_token"]) == []
    wait_until(lambda: db.one("SELECT finished_at FROM transactions WHERE transaction_id = %s",
                              bought["order_id"])["finished_at"], 10, "finished_at written")
