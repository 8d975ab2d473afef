/// What a voided purchase does to the Google purchase it names, by the state
/// its row is in. A whole refund (no `voidedQuantity`) refunds the purchase; a
/// quantity-based partial refund takes back only its quantity, and refunds the
/// purchase when nothing is left. Goods are taken back (its order refunded, a
/// `refunded` event for the game) only from a delivered purchase: an
/// `unclaimed` one was never given to anyone.
public enum GoogleVoidedRefund: Equatable, Sendable {
    /// The transaction `refunded`. `refundedQuantity`: the quantity this refund
    /// took back when it was a partial refund of all that was left; nil for a
    /// whole refund.
    case whole(takesBack: Bool, refundedQuantity: Int?)
    /// `quantity` more of the purchase refunded; the rest stays (the transaction keeps its state).
    case part(quantity: Int, takesBack: Bool)
    /// Already refunded: nothing left to take back.
    case unchanged

    /// - Parameters:
    ///   - quantity: the purchase's `transactions.quantity`.
    ///   - refundedQuantity: `transactions.refunded_quantity` so far.
    ///   - voidedQuantity: this refund's `voidedQuantity`; nil: the whole purchase.
    public static func decide(
        _ state: StoredTransaction.State, quantity: Int, refundedQuantity: Int, voidedQuantity: Int?
    ) -> GoogleVoidedRefund {
        let takesBack: Bool
        switch state {
        case .refunded: return .unchanged
        case .delivered: takesBack = true
        case .unclaimed: takesBack = false
        }
        guard let voidedQuantity else { return .whole(takesBack: takesBack, refundedQuantity: nil) }
        let left = max(quantity - refundedQuantity, 0)
        // Google never refunds more than is left; should it say so, only what is left is taken back.
        let refunded = min(voidedQuantity, left)
        guard refunded > 0 else { return .unchanged }
        return refunded == left
            ? .whole(takesBack: takesBack, refundedQuantity: refunded)
            : .part(quantity: refunded, takesBack: takesBack)
    }

    /// The `google_notifications.effect` it is recorded with.
    public var effect: GoogleNotificationEffect {
        switch self {
        case .whole: return .refunded
        case .part: return .partiallyRefunded
        case .unchanged: return .unchanged
        }
    }
}

extension GoogleNotificationEffect {
    /// The effect of a notification that applied several voided purchases: the most any of them did
    /// (refunded, then partially refunded, then unchanged); `stored` when none applied.
    public static func most(of effects: [GoogleNotificationEffect]) -> GoogleNotificationEffect {
        [.refunded, .partiallyRefunded, .unchanged].first(where: effects.contains) ?? .stored
    }
}
