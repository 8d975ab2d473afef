import MariaDB

/// The console's "send now" of a refund request's answer, and `iapctl consumption
/// send`: the request back to `pending` with `next_attempt_at` now, so that the
/// sender answers it on its next round, before Apple's 12 hours (`deadline_at`)
/// run out. One the sender holds (a lease not yet expired), already sent, or
/// already decided by Apple (`outcome`: no answer counts any more) is left alone.
public enum RefundAnswerNow {
    public enum Outcome: String, Sendable {
        case queued
        case noSuchRequest = "no_such_request"
        /// Sent, no consent, past Apple's deadline, decided by Apple, or being sent now: nothing to send.
        case notSendable = "not_sendable"
    }

    /// What queueing a transaction's newest request came to (`iapctl consumption send`).
    public enum TransactionOutcome: Equatable, Sendable {
        case queued
        /// The transaction has no refund request.
        case noRequest
        /// Its newest request, with its `status`, is not sendable (`Outcome.notSendable`).
        case notSendable(status: String)
    }

    public static func queue(requestID: UInt64, _ connection: MariaDBConnection) throws -> Outcome {
        let changed = try connection.execute(
            """
            UPDATE consumption_requests SET status = 'pending', next_attempt_at = UTC_TIMESTAMP(3)
            WHERE request_id = ? AND status IN ('pending', 'failed') AND deadline_at > UTC_TIMESTAMP(3) AND outcome IS NULL
              AND (lease_expires_at IS NULL OR lease_expires_at < UTC_TIMESTAMP(3))
            """,
            [.integer(Int64(requestID))]
        ).matchedRows ?? 0
        if changed == 1 { return .queued }
        let exists = try connection.execute(
            "SELECT 1 FROM consumption_requests WHERE request_id = ?", [.integer(Int64(requestID))]
        ).first != nil
        return exists ? .notSendable : .noSuchRequest
    }

    /// The transaction's newest request (a new one is made only once the one before is no longer
    /// pending), queued as `queue(requestID:)` queues it.
    public static func queue(transactionID: String, _ connection: MariaDBConnection) throws -> TransactionOutcome {
        guard let newest = try connection.execute(
            """
            SELECT request_id, status FROM consumption_requests WHERE transaction_id = ? ORDER BY request_id DESC LIMIT 1
            """,
            [.text(transactionID)]
        ).first, let requestID = newest[0].flatMap({ UInt64($0) }) else { return .noRequest }
        switch try queue(requestID: requestID, connection) {
        case .queued: return .queued
        case .noSuchRequest: return .noRequest
        case .notSendable: return .notSendable(status: newest[1] ?? "-")
        }
    }
}
