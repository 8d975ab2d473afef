/// What an `events` row tells the game to do (API.md "Events for the game").
public enum GameEventType: String, Sendable, CaseIterable {
    /// Grant the goods.
    case delivered
    /// Take them back.
    case refunded
    /// Grant them again: Apple reversed its refund.
    case refundReversed = "refund_reversed"
}
