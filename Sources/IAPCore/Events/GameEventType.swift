/// What an `events` row tells the game to do (docs/events.md "The events").
public enum GameEventType: String, Sendable, CaseIterable {
    /// Grant the goods.
    case delivered
    /// Take them back.
    case refunded
    /// Grant them again: Apple reversed its refund.
    case refundReversed = "refund_reversed"
    /// Nothing to grant or take back: the player asked Apple for a refund, and the game may
    /// answer how much of the purchase was used (docs/events.md "Refund requests").
    case refundRequested = "refund_requested"
    /// Nothing to grant or take back: a subscription chain's status, expiry or auto-renewal changed
    /// (its renewals and refunds have their own `delivered` and `refunded` events).
    case subscriptionChanged = "subscription_changed"
}
