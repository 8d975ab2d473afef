/// What a Google Play developer notification does to the ledger, before the
/// database is read: a package not configured is only stored (`ignored`); a
/// full refund of a one-time product is applied as Apple's REFUND is; the rest
/// is stored as it came.
public enum GoogleNotificationPlan: Equatable, Sendable {
    case store(GoogleNotificationEffect)
    /// refundType 1 of a one-time product: the purchase `purchaseToken` names (else `orderID`) refunded in whole.
    case fullRefund(purchaseToken: String, orderID: String?)
    /// A refund review: a refund request of the order, answered with `orders.reviewrefund`.
    case refundReview(pendingRefundToken: String, orderID: String, reason: String?, obfuscatedAccountID: String?)

    public static func plan(_ notification: GoogleDeveloperNotification, packages: [String]) -> GoogleNotificationPlan {
        guard packages.contains(notification.packageName) else { return .store(.ignored) }
        switch notification.kind {
        case .voidedPurchase(let token, let orderID, isOneTimeProduct: true, isPartial: false):
            return .fullRefund(purchaseToken: token, orderID: orderID)
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
    /// Nothing left to change: already refunded.
    case unchanged
    /// A refund review, written to the refund-request ledger (a review already there: `unchanged`).
    case refundRequested = "refund_requested"
    /// A kind without effect here, or a purchase the ledger does not hold.
    case stored
    /// A package this service is not configured for.
    case ignored
}

/// A full refund of a stored Google purchase, by the state its row is in.
public enum GoogleFullRefund: Equatable, Sendable {
    /// Mark it refunded; `takesBack`: it was delivered, so its order is refunded and the game gets a `refunded` event.
    case refund(takesBack: Bool)
    case unchanged

    public static func decide(_ state: StoredTransaction.State) -> GoogleFullRefund {
        switch state {
        case .delivered: return .refund(takesBack: true)
        case .unclaimed: return .refund(takesBack: false)
        case .refunded: return .unchanged
        }
    }

    public var effect: GoogleNotificationEffect {
        self == .unchanged ? .unchanged : .refunded
    }
}
