/// The `state` of one transaction in a verify answer (and the `transactions.state` column).
public enum TransactionState: String, Equatable, Sendable, CaseIterable {
    /// Delivered by this request.
    case delivered
    /// Delivered by an earlier request.
    case alreadyDelivered = "already_delivered"
    /// Cancelled by Apple: never delivered.
    case refunded
    /// Not for us (bundle id or sandbox policy).
    case rejected
}
