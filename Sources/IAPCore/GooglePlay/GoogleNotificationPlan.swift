/// What a Google Play developer notification does to the ledger, before the
/// database is read: a package not configured is only stored (`ignored`); a
/// full refund of a one-time product is applied as Apple's REFUND is, a
/// partial one once its quantity is read from Google; the rest is stored as it came.
public enum GoogleNotificationPlan: Equatable, Sendable {
    case store(GoogleNotificationEffect)
    /// refundType 1 of a one-time product: the purchase `purchaseToken` names (else `orderID`) refunded in whole.
    case fullRefund(purchaseToken: String, orderID: String?)
    /// refundType 2 of a one-time product: the quantity is not in the notification; the voided purchases
    /// Google lists for `purchaseToken` are read and each applied (`GoogleVoidedRefund`).
    case partialRefund(purchaseToken: String, orderID: String?)
    /// `oneTimeProductNotification` PURCHASED: the purchase read with productsv2, then delivered or held
    /// (`GoogleNotifiedPurchaseDecision`).
    case readPurchase(purchaseToken: String)
    /// A refund review: a refund request of the order, answered with `orders.reviewrefund`.
    case refundReview(pendingRefundToken: String, orderID: String, reason: String?, obfuscatedAccountID: String?)

    public static func plan(_ notification: GoogleDeveloperNotification, packages: [String]) -> GoogleNotificationPlan {
        guard packages.contains(notification.packageName) else { return .store(.ignored) }
        switch notification.kind {
        case .voidedPurchase(let token, let orderID, isOneTimeProduct: true, isPartial: false):
            return .fullRefund(purchaseToken: token, orderID: orderID)
        case .voidedPurchase(let token, let orderID, isOneTimeProduct: true, isPartial: true):
            return .partialRefund(purchaseToken: token, orderID: orderID)
        case .oneTimeProductPurchased(let token, _):
            return .readPurchase(purchaseToken: token)
        case .oneTimeProductCanceled:
            return .store(.cancelled)
        case .pendingRefundReview(let token, let orderID, let reason, let accountID):
            return .refundReview(pendingRefundToken: token, orderID: orderID, reason: reason, obfuscatedAccountID: accountID)
        default:
            return .store(.stored)
        }
    }
}

/// `google_notifications.effect`.
public enum GoogleNotificationEffect: String, Equatable, Sendable {
    /// The purchase refunded in whole (delivered goods taken back with a `refunded` event).
    case refunded
    /// Part of the purchase's quantity refunded (`transactions.refunded_quantity`); the rest stays.
    /// (`google_notifications.effect` holds at most 16 characters.)
    case partiallyRefunded = "partly_refunded"
    /// Nothing left to change: already refunded, or (a purchase) already delivered or held.
    case unchanged
    /// A purchase pushed as PURCHASED, delivered to the order its `obfuscatedExternalAccountId` names.
    case delivered
    /// A paid purchase naming no order here: held for the first verify that shows it.
    case unclaimed
    /// A purchase pushed as PURCHASED that Google still has `PENDING`: nothing delivered.
    case pending
    /// A pending purchase cancelled (CANCELED, or read `CANCELLED`): nothing delivered.
    case cancelled
    /// A refund review, written to the refund-request ledger (a review already there: `unchanged`).
    case refundRequested = "refund_requested"
    /// A kind without effect here, or a purchase the ledger does not hold.
    case stored
    /// A package this service is not configured for.
    case ignored
}
