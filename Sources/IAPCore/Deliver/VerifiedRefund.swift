/// docs/api.md "POST /v1/notifications/apple", its rule on order, for a refund a
/// verify shows: refund-state changes apply in the order of their dates, by
/// verify as by notifications (`NotificationChange`), against the one record
/// of the last change applied to the transaction
/// (`transactions.notification_signed_at`). Without it, a client posting an
/// old refunded JWS after `REFUND_REVERSED` would take the goods back again
/// from a customer Apple charged again.
///
/// A refund's date: a signed transaction's `signedDate` (Apple's word as of
/// then). A receipt's entry is signed by no one: verifyReceipt answers now,
/// but what it says of a refund may lag behind a reversal Apple already
/// notified, so it is dated by its `cancellation_date`, the earliest moment
/// anyone could know of that refund: a change applied since (a reversal) is
/// newer and stands, while a refund after that reversal (a later
/// `cancellation_date`) still applies. A refund with no date at all applies
/// only to a transaction with no dated change on record.
public enum VerifiedRefund: Equatable, Sendable {
    /// Refund it (or keep it refunded); `changeDate`, when known, becomes the
    /// transaction's last refund-state change.
    case apply(changeDate: Int64?)
    /// Older than the last refund-state change applied: nothing changes and
    /// the transaction is answered as stored.
    case stale

    /// The date a refund shown by `transaction` takes its place by, in ms.
    public static func changeDate(of transaction: AppleTransaction) -> Int64? {
        transaction.signedDateMs ?? transaction.cancellationDateMs
    }

    /// What a verify does with the refunded `transaction`.
    /// - Parameter lastChange: the date of the last refund-state change applied
    ///   to its row, in ms; nil when none is on record (or there is no row).
    public static func decide(_ transaction: AppleTransaction, lastChange: Int64?) -> VerifiedRefund {
        let date = changeDate(of: transaction)
        guard let lastChange else { return .apply(changeDate: date) }
        // As for notifications: only an older one is stale; the same date applies.
        guard let date, date >= lastChange else { return .stale }
        return .apply(changeDate: date)
    }
}
