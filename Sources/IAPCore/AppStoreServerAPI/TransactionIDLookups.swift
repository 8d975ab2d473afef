/// Whether a bare `transaction_id` may be looked up at Apple now (API.md
/// "POST /v1/transactions/verify"): not when Apple said less than a minute ago
/// that it does not know it (`UnknownTransactionIDs`: `pending` from memory),
/// nor when the minute's look-ups are spent (`TransactionLookupBudget`:
/// `retry_later`). An id answered from memory costs no look-up. The service
/// keeps one behind a lock; times are milliseconds on its monotonic clock.
public struct TransactionIDLookups: Sendable {
    public enum Decision: Equatable, Sendable {
        /// Ask Apple (one look-up of the budget is taken).
        case lookUp
        /// Apple said less than a minute ago that neither environment knows it.
        case knownUnknown
        /// The minute's look-ups are spent.
        case overBudget
    }

    private var budget: TransactionLookupBudget
    private var unknown: UnknownTransactionIDs

    /// `perMinute`: `IAP_APPSTORE_LOOKUPS_PER_MINUTE`; also the most ids
    /// remembered, since no more can be learned in a minute.
    public init(perMinute: Int) {
        budget = TransactionLookupBudget(perMinute: perMinute)
        unknown = UnknownTransactionIDs(capacity: perMinute)
    }

    public mutating func admit(_ transactionID: String, atMs now: Int64) -> Decision {
        if unknown.isUnknown(transactionID, atMs: now) { return .knownUnknown }
        return budget.take(atMs: now) ? .lookUp : .overBudget
    }

    /// Apple answered at `now` that neither environment asked knows the id.
    public mutating func learnUnknown(_ transactionID: String, atMs now: Int64) {
        unknown.learnUnknown(transactionID, atMs: now)
    }
}
