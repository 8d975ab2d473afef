"""Auto-renewable subscriptions in the simulator's notifications: the renewal info Apple signs beside a period's
transaction (data.signedRenewalInfo), as each subscription notification type would carry it.

notifications.py uses it: POST /notifications/send with a transaction of type "Auto-Renewable Subscription" (its
"expires_ms" the period's end) signs renewal info too, shaped by the type and subtype (see renewal_info_for);
"renewal_info" {signed_data.renewal_info() fields: auto_renew, auto_renew_product_id, expiration_intent,
grace_period_expires_ms, billing_retry, ...} replaces what it would say. For example a grace period:
  {"url": ..., "notification_type": "DID_FAIL_TO_RENEW", "subtype": "GRACE_PERIOD",
   "transaction": {"product_id": "vip_monthly", "type": "Auto-Renewable Subscription",
                   "original_transaction_id": "2000000000000001", "expires_ms": 1767225600000}}
Tests import renewal_info_for and pass its result to notifications.signed_notification(renewal_payload=...).
"""
import signed_data

SUBSCRIPTION = "Auto-Renewable Subscription"
# Apple's billing grace periods last 3, 16 or 28 days: the simulator's is 16.
GRACE_PERIOD_MS = 16 * 86_400_000
# EXPIRED subtypes as the renewal info's expirationIntent numbers (5: any other reason).
EXPIRATION_INTENTS = {"VOLUNTARY": 1, "BILLING_RETRY": 2, "PRICE_INCREASE": 3, "PRODUCT_NOT_FOR_SALE": 4}
# The subtypes Apple sends with each subscription notification type (None: without a subtype).
SUBTYPES = {
    "SUBSCRIBED": {"INITIAL_BUY", "RESUBSCRIBE"},
    "DID_RENEW": {None, "BILLING_RECOVERY"},
    "DID_FAIL_TO_RENEW": {None, "GRACE_PERIOD"},
    "GRACE_PERIOD_EXPIRED": {None},
    "EXPIRED": {"VOLUNTARY", "BILLING_RETRY", "PRICE_INCREASE", "PRODUCT_NOT_FOR_SALE"},
    "DID_CHANGE_RENEWAL_STATUS": {"AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED"},
    "DID_CHANGE_RENEWAL_PREF": {None, "UPGRADE", "DOWNGRADE"},
    "OFFER_REDEEMED": {None, "INITIAL_BUY", "RESUBSCRIBE", "UPGRADE", "DOWNGRADE"},
    "PRICE_INCREASE": {"PENDING", "ACCEPTED"},
    "RENEWAL_EXTENDED": {None},
    "REFUND": {None},
    "REVOKE": {None},
    "REFUND_REVERSED": {None},
}


def renewal_info_for(notification_type, subtype, transaction, *, signed_ms=None, **fields):
    """The renewal info (a signed_data.renewal_info() dict) Apple sends with `notification_type` and `subtype`
    about `transaction` (a signed_data.transaction() dict of a subscription period): in billing retry after a
    failed renewal, in a grace period of GRACE_PERIOD_MS past the period's end with subtype GRACE_PERIOD,
    auto-renewal off with the reason of an EXPIRED, on or off as DID_CHANGE_RENEWAL_STATUS says. `fields`
    replace what it would say. ValueError for a subtype Apple never sends with the type."""
    if notification_type in SUBTYPES and subtype not in SUBTYPES[notification_type]:
        allowed = ", ".join(sorted(s or "none" for s in SUBTYPES[notification_type]))
        raise ValueError(f"{notification_type} has subtype {allowed}, not {subtype}")
    expires = transaction.get("expiresDate")
    shaped = {"renewal_ms": expires, "environment": transaction["environment"], "signed_ms": signed_ms}
    if notification_type in ("DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED"):
        shaped["billing_retry"] = True
        if subtype == "GRACE_PERIOD" and expires:
            shaped["grace_period_expires_ms"] = expires + GRACE_PERIOD_MS
    elif notification_type == "EXPIRED":
        shaped.update(auto_renew=False, expiration_intent=EXPIRATION_INTENTS.get(subtype, 5))
    elif notification_type == "DID_CHANGE_RENEWAL_STATUS":
        shaped["auto_renew"] = subtype != "AUTO_RENEW_DISABLED"
    shaped.update(fields)
    return signed_data.renewal_info(transaction["originalTransactionId"], transaction["productId"], **shaped)


def is_subscription(transaction, fields):
    """Whether a notification about `transaction` carries renewal info: a subscription's period, or renewal info
    fields were asked for."""
    return transaction is not None and (transaction.get("type") == SUBSCRIPTION or fields is not None)
