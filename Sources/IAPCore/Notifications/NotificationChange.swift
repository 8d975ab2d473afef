/// The state machine of docs/api.md "POST /v1/notifications/apple": given what the
/// database holds for a transaction (read under its row lock) and a verified
/// notification about it, the one change to make. Refund decisions flip
/// (declined, refunded, reversed) and Apple's arrivals are not in order: each
/// notification applies in the order of its `signedDate`, so one older than
/// the last one applied to the transaction changes nothing. Only the types
/// with an effect take a place in that order: a `REFUND_DECLINED` arriving
/// first must not make an older `REFUND` look stale.
public enum NotificationChange: Equatable, Sendable {
    /// Nothing changes but the notification's own row.
    case none(NotificationEffect)
    /// Deliver it (insert the row, or turn an unclaimed or never-delivered
    /// refunded row into a delivered one), with its `delivered` event.
    case deliver(DeliveryTarget)
    /// Keep it paid but without a user: the first verify that shows it claims it.
    case holdUnclaimed
    /// Refunded (inserted so when never seen, so that nothing delivers it
    /// later); a delivered one has its `refunded` event and its order refunded.
    case refund
    /// A refunded transaction that had been delivered is delivered again, with
    /// its order, and the game is told (`refund_reversed`).
    case restore

    /// Where a delivery goes.
    public enum DeliveryTarget: Equatable, Sendable {
        /// The open order its `appAccountToken` names, of the same product, and its user.
        case order(String, userID: String)
        /// A new order (origin `notification`) of that order's user.
        case newOrder(userID: String)
    }

    /// What the `notifications` row records (its `effect` column).
    public var effect: NotificationEffect {
        switch self {
        case .none(let effect): return effect
        case .deliver: return .delivered
        case .holdUnclaimed: return .unclaimed
        case .refund: return .refunded
        case .restore: return .restored
        }
    }

    /// Whether the notification took its place in its transaction's history
    /// (`notifications.applied`, and its `signedDate` becomes the transaction's last).
    public var isApplied: Bool {
        effect != .stored && effect != .stale
    }

    /// The change for `notification` of `kind` signed at `signedDate`.
    /// - Parameters:
    ///   - stored: the transaction's row, nil when the database has never seen it.
    ///   - purchase: what the signed transaction inside says and where it could go.
    public static func decide(
        kind: NotificationKind, signedDate: Int64, stored: StoredTransaction?, purchase: NotifiedPurchase
    ) -> NotificationChange {
        guard kind != .informational else { return .none(.stored) }
        if let last = stored?.lastNotificationSignedDate, signedDate < last { return .none(.stale) }
        switch kind {
        case .informational:
            return .none(.stored)
        case .charge:
            guard stored == nil || stored?.state == .unclaimed else { return .none(.unchanged) }
            if purchase.isRevoked { return .refund }
            return claimable(deliveryOrHold(purchase), stored: stored)
        case .refund:
            return stored?.state == .refunded ? .none(.unchanged) : .refund
        case .refundReversed:
            guard let stored else { return deliveryOrHold(purchase) }
            switch stored.state {
            case .refunded: return stored.wasDelivered ? .restore : deliveryOrHold(purchase)
            case .unclaimed: return claimable(deliveryOrHold(purchase), stored: stored)
            case .delivered: return .none(.unchanged)
            }
        }
    }

    /// What the purchase would be without any refund: delivered to its token's
    /// order when it may be delivered at all, else held unclaimed.
    private static func deliveryOrHold(_ purchase: NotifiedPurchase) -> NotificationChange {
        guard purchase.mayDeliver, let order = purchase.tokenOrder else { return .holdUnclaimed }
        return .deliver(
            order.isOpen && order.productID == purchase.productID
                ? .order(order.orderID, userID: order.userID) : .newOrder(userID: order.userID))
    }

    /// An unclaimed row held unclaimed again is no change.
    private static func claimable(_ change: NotificationChange, stored: StoredTransaction?) -> NotificationChange {
        change == .holdUnclaimed && stored?.state == .unclaimed ? .none(.unchanged) : change
    }
}

/// What a notification did, as `notifications.effect` records it.
public enum NotificationEffect: String, Equatable, Sendable, CaseIterable {
    case delivered
    case unclaimed
    case refunded
    /// A reversed refund: delivered again.
    case restored
    /// Applied in its place, with nothing to change (a charge already delivered, a refund already refunded).
    case unchanged
    /// Older than the last notification applied to its transaction.
    case stale
    /// A type without effect (`REFUND_DECLINED`, `CONSUMPTION_REQUEST`, `TEST`, ...), or one without a transaction.
    case stored
}

/// A `transactions` row as a notification finds it, under its lock.
public struct StoredTransaction: Equatable, Sendable {
    public enum State: String, Equatable, Sendable {
        case delivered, refunded, unclaimed
    }

    public let state: State
    /// It went to an order once (a refunded row keeps its `order_id`).
    public let wasDelivered: Bool
    /// The `signedDate` of the last notification applied to it, in ms; nil: none yet.
    public let lastNotificationSignedDate: Int64?

    public init(state: State, wasDelivered: Bool, lastNotificationSignedDate: Int64?) {
        self.state = state
        self.wasDelivered = wasDelivered
        self.lastNotificationSignedDate = lastNotificationSignedDate
    }
}

/// The signed transaction a notification carries, and where it could go.
public struct NotifiedPurchase: Equatable, Sendable {
    public let productID: String
    /// It carries a `revocationDate`.
    public let isRevoked: Bool
    /// The order its `appAccountToken` names, when that order exists.
    public let tokenOrder: RequestOrder?
    /// Its environment may be delivered without a client's verify (`NotificationAdmission`).
    public let mayDeliver: Bool

    public init(productID: String, isRevoked: Bool, tokenOrder: RequestOrder?, mayDeliver: Bool) {
        self.productID = productID
        self.isRevoked = isRevoked
        self.tokenOrder = tokenOrder
        self.mayDeliver = mayDeliver
    }
}
