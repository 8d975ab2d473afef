/// Whether Get Transaction Info may be asked now, for a bare `transaction_id`
/// (docs/api.md "POST /v1/transactions/verify") or for the entries of a receipt
/// confirmed under `server-api`: one minute's budget for both
/// (`TransactionLookupBudget`: `retry_later` once spent). A bare id is also
/// not asked about when Apple said less than a minute ago that it does not
/// know it (`UnknownTransactionIDs`: `pending` from memory, costing no
/// look-up), nor when its requester's user or address has used its share of
/// the minute (`LookupShares`: `retry_later`). The service keeps one behind a
/// lock; times are milliseconds on its monotonic clock.
public struct TransactionIDLookups: Sendable {
    public enum Decision: Equatable, Sendable {
        /// Ask Apple (one look-up of the budget and of the requester's shares is taken).
        case lookUp
        /// Apple said less than a minute ago that neither environment knows it.
        case knownUnknown
        /// The minute's look-ups are spent.
        case overBudget
        /// The requester's user or address has had its share of the minute's look-ups.
        case overShare
    }

    private var budget: TransactionLookupBudget
    private var shares: LookupShares
    private var unknown: UnknownTransactionIDs

    /// `perMinute`: `IAP_APPSTORE_LOOKUPS_PER_MINUTE`; also the most ids
    /// remembered, since no more can be learned in a minute.
    public init(perMinute: Int) {
        budget = TransactionLookupBudget(perMinute: perMinute)
        shares = LookupShares(perMinute: perMinute)
        unknown = UnknownTransactionIDs(capacity: perMinute)
    }

    /// Whether Apple said less than a minute before `now` that neither environment knows the id.
    public mutating func isKnownUnknown(_ transactionID: String, atMs now: Int64) -> Bool {
        unknown.isUnknown(transactionID, atMs: now)
    }

    /// A bare `transaction_id` that `requester` asks about.
    public mutating func admit(_ transactionID: String, for requester: LookupShares.Requester, atMs now: Int64) -> Decision {
        if unknown.isUnknown(transactionID, atMs: now) { return .knownUnknown }
        guard shares.allows(requester, atMs: now) else { return .overShare }
        guard budget.take(atMs: now) else { return .overBudget }
        shares.record(requester, atMs: now)
        return .lookUp
    }

    /// The `count` entries of one receipt, all or none: whether they may be confirmed now.
    public mutating func admitConfirmations(_ count: Int, atMs now: Int64) -> Bool {
        budget.take(count, atMs: now)
    }

    /// Apple answered at `now` that neither environment asked knows the id.
    public mutating func learnUnknown(_ transactionID: String, atMs now: Int64) {
        unknown.learnUnknown(transactionID, atMs: now)
    }
}
