/// What a PURCHASED push does with the purchase read from Google (productsv2),
/// before anything is written. The push names no user: the purchase goes to
/// the order its `obfuscatedExternalAccountId` names when that is an order
/// here (the app set it to our order id when it launched the billing flow);
/// otherwise a paid purchase is held `unclaimed` for the first verify that
/// shows it, which runs every check of a verify before it delivers. A purchase
/// not paid yet is never delivered.
public enum GoogleNotifiedPurchaseDecision {
    public enum Verdict: Equatable, Sendable {
        /// Deliver to this order, of this user, as a verify would (its checks still apply).
        case deliver(to: GoogleAccountProof.AccountOrder, productID: String)
        /// Paid, of a product sold here, naming no order here: an `unclaimed` row.
        case holdUnclaimed(productID: String)
        /// Not for this ledger (no line item, or a product unknown or inactive here): only the push is stored.
        case store
        case pending
        case cancelled
    }

    /// - Parameters:
    ///   - accountOrder: the stored order the purchase's account id names; nil when it names none.
    ///   - sells: whether the catalog sells a product id, active.
    public static func decide(
        _ purchase: GooglePurchase, accountOrder: GoogleAccountProof.AccountOrder?, sells: (String) -> Bool
    ) -> Verdict {
        switch purchase.state {
        case .pending: return .pending
        case .cancelled: return .cancelled
        case .purchased: break
        }
        guard let productID = purchase.lineItems.first?.productID, sells(productID) else { return .store }
        guard let accountOrder else { return .holdUnclaimed(productID: productID) }
        return .deliver(to: accountOrder, productID: productID)
    }
}

extension GoogleNotifiedPurchaseDecision.Verdict {
    /// The `google_notifications.effect` of a verdict that writes no purchase.
    public var effectWithoutDelivery: GoogleNotificationEffect? {
        switch self {
        case .pending: return .pending
        case .cancelled: return .cancelled
        case .store: return .stored
        case .deliver, .holdUnclaimed: return nil
        }
    }
}
