"""Events of each kind the game receives, made for the webhook tests (test_webhook.py, test_php_webhook.py):
a Google Play purchase delivered through its verify route, a subscription started by SUBSCRIBED, and the
rows of a Google quantity-based partial refund, written in SQL as a voided purchase writes them."""
import requests
import signed_data
import subscription_notifications

import notification_support as notify
from support import PAY_6, PAY_30, assert_verify_answer, new_transaction_id

GOOGLE_PACKAGE = "com.example.game"


def deliver_on_google_play(api, google, user_id, quantity):
    """A purchase of `quantity` bought at the Google Play double and delivered to `user_id` by its verify
    route; returns the double's purchase (its order_id is the transaction id)."""
    bought = requests.post(google + "/purchases", json={"package_name": GOOGLE_PACKAGE, "product_id": PAY_6,
                                                        "quantity": quantity}, timeout=10)
    assert bought.status_code == 200, bought.text
    bought = bought.json()
    assert_verify_answer(api.post_json("/v1/google/purchases/verify", {
        "package_name": GOOGLE_PACKAGE, "product_id": PAY_6, "purchase_token": bought["purchase_token"],
        "user_id": user_id}), "delivered")
    return bought


def insert_event_like(db, event_id, type_, **columns):
    """An events row of `type_` for the user, order and transaction of event `event_id`, with `columns` set, as
    the service writes one; returns its event_id."""
    names, values = "".join(f", {name}" for name in columns), "".join(", %s" for _ in columns)
    db.execute(f"INSERT INTO events (type, store, transaction_id, original_transaction_id, order_id, user_id,"
               f" product_id, quantity, environment, occurred_at, created_at{names})"
               f" SELECT %s, store, transaction_id, original_transaction_id, order_id, user_id, product_id, quantity,"
               f" environment, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3){values} FROM events WHERE event_id = %s",
               type_, *columns.values(), event_id)
    return db.scalar("SELECT LAST_INSERT_ID()")


def refund_partly(db, delivered, refunded_quantity):
    """Google refunds `refunded_quantity` of the purchase of the `delivered` event (an events row): the
    transaction's refunded_quantity and a `refunded` event that carries it; returns the event's id."""
    db.execute("UPDATE transactions SET refunded_quantity = refunded_quantity + %s WHERE transaction_id = %s",
               refunded_quantity, delivered["transaction_id"])
    return insert_event_like(db, delivered["event_id"], "refunded", refunded_quantity=refunded_quantity)


def subscribe(api, user_id):
    """A subscription period bought now for an hour with an order of `user_id`: SUBSCRIBED (with its renewal
    info, auto-renewal on) delivers it and starts the chain. Returns the period's transaction payload."""
    order = api.create_order(user_id, PAY_30)
    now = notify.now_ms()
    period = signed_data.transaction(
        PAY_30, transaction_id=new_transaction_id(), type=subscription_notifications.SUBSCRIPTION,
        purchase_ms=now - 60_000, expires_ms=now + 3_600_000, app_account_token=order["order_id"])
    renewal = subscription_notifications.renewal_info_for("SUBSCRIBED", "INITIAL_BUY", period, signed_ms=now)
    notify.send(api, "SUBSCRIBED", period, subtype="INITIAL_BUY", signed_ms=now, renewal_payload=renewal)
    return period
