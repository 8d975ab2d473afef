/// What an `events` row tells the game to do (API.md "Events for the game").
public enum GameEventType: String, Sendable, CaseIterable {
    /// Grant the goods.
    case delivered
    /// Take them back.
    case refunded
    /// Grant them again: Apple reversed its refund.
    case refundReversed = "refund_reversed"
    /// Nothing to grant or take back: the player asked Apple for a refund, and the game may
    /// answer how much of the purchase was used (API.md "Refund requests").
    case refundRequested = "refund_requested"
}
