import MariaDB

/// The console's "send now" of a refund request's answer: the request back to
/// `pending` with `next_attempt_at` now, so that the sender answers it on its
/// next round, before Apple's 12 hours (`deadline_at`) run out. One the sender
/// holds (a lease not yet expired) or already sent is left alone.
public enum RefundAnswerNow {
    public enum Outcome: String, Sendable {
        case queued
        case noSuchRequest = "no_such_request"
        /// Sent, no consent, or past Apple's deadline: nothing to send.
        case notSendable = "not_sendable"
    }

    public static func queue(requestID: UInt64, _ connection: MariaDBConnection) throws -> Outcome {
        let changed = try connection.execute(
            """
            UPDATE consumption_requests SET status = 'pending', next_attempt_at = UTC_TIMESTAMP(3)
            WHERE request_id = ? AND status IN ('pending', 'failed') AND deadline_at > UTC_TIMESTAMP(3)
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
}
