import IAPCore
import MariaDB

/// SQL of `iapctl retry-pending` on the `receipts` table: the rows whose
/// verification never completed, and their attempts, backoff and final state.
struct UnverifiedReceipts {
    let connection: MariaDBConnection

    /// A receipts row left unverified, with what its request said.
    struct Row {
        let receiptID: UInt64
        let sha256: String
        /// The receipt's bytes, in the row or in the row its `bytes_in` names;
        /// nil when neither holds them (deleted by hand: prune keeps them).
        let receiptData: String?
        let orderID: String?
        let transactionID: String?
        let userID: String
        let appVersion: String?
        /// Attempts retry-pending made before this run.
        let attempts: Int
    }

    /// The rows retry-pending still has to finish, of `receipts r`: never
    /// completed (Apple or the database was down, the process died), not given
    /// up or superseded. Only receipts (`kind`): a `jws` row is open only while
    /// the App Store Server API is asked for a `transaction_id`, or for good if
    /// the process died then, and verifyReceipt can do nothing with it (all
    /// such rows hold the same empty data, so it would also close them as
    /// "superseded" by one another). The gauge of this backlog
    /// (`RetryBacklogProbe`) counts by the same text, so that it shows what a
    /// run would take and returns to 0 once runs have taken it.
    static let stillToFinish = "r.verified_at IS NULL AND r.retry_final_state IS NULL AND r.kind = 'receipt'"

    /// The rows still to finish (`stillToFinish`) received before `time` and
    /// whose backoff is over at `now`; oldest first.
    /// `receipts_retry_due` holds every other condition, so only the open rows
    /// are read (EXPLAIN on MariaDB 10.11: a range over them, with 200,000
    /// completed and 5,000 given-up rows beside them). A row that stored its
    /// bytes once already (`bytes_in`) reads them from that row, by its key.
    func due(receivedBefore time: Timestamp, now: Timestamp, limit: Int) throws(MariaDBError) -> [Row] {
        try connection.execute(
            """
            SELECT r.receipt_id, r.sha256, COALESCE(r.receipt_data, holder.receipt_data), r.order_id,
              r.transaction_id, r.user_id, r.app_version, r.retry_attempts
            FROM receipts r LEFT JOIN receipts holder ON holder.receipt_id = r.bytes_in
            WHERE \(Self.stillToFinish) AND r.received_at < ?
              AND (r.retry_next_at IS NULL OR r.retry_next_at <= ?)
            ORDER BY r.receipt_id LIMIT ?
            """,
            [.text(time.sql), .text(now.sql), .integer(Int64(limit))]
        ).rows.compactMap { row in
            guard let id = row[0].flatMap({ UInt64($0) }), let sha256 = row[1], let userID = row[5],
                  let attempts = row[7].flatMap({ Int($0) })
            else { return nil }
            return Row(
                receiptID: id, sha256: sha256, receiptData: row[2], orderID: row[3], transactionID: row[4],
                userID: userID, appVersion: row[6], attempts: attempts)
        }
    }

    /// The first row of these exact bytes whose verification completed, if any.
    func completedSibling(sha256: String) throws(MariaDBError) -> UInt64? {
        try connection.execute(
            "SELECT MIN(receipt_id) FROM receipts WHERE sha256 = ? AND verified_at IS NOT NULL", [.text(sha256)]
        ).first?[0].flatMap { UInt64($0) }
    }

    /// Closes a row whose bytes completed in `sibling`: Apple is not asked again.
    func supersede(_ receiptID: UInt64, by sibling: UInt64) throws(MariaDBError) {
        try connection.execute(
            """
            UPDATE receipts SET retry_final_state = 'superseded', superseded_by = ?
            WHERE receipt_id = ? AND verified_at IS NULL
            """,
            [.integer(Int64(sibling)), .integer(Int64(receiptID))])
    }

    /// Stores an attempt's count and what follows it: the time of the next
    /// attempt, or the row given up with its reason.
    func recordAttempt(
        _ receiptID: UInt64, attempts: Int, next: PendingRetryPolicy.Next, at now: Timestamp
    ) throws(MariaDBError) {
        var nextAttempt: SQLValue = .null
        var finalState: SQLValue = .null
        var reason: SQLValue = .null
        switch next {
        case .settled:
            break
        case .retry(let seconds):
            nextAttempt = .text(Timestamp(milliseconds: now.milliseconds + Int64(seconds) * 1000).sql)
        case .giveUp(let why):
            finalState = .text("gave_up")
            reason = .text(String(why.prefix(255)))
        }
        try connection.execute(
            """
            UPDATE receipts SET retry_attempts = ?, retry_next_at = ?, retry_final_state = ?, retry_final_reason = ?
            WHERE receipt_id = ?
            """,
            [.integer(Int64(attempts)), nextAttempt, finalState, reason, .integer(Int64(receiptID))])
    }
}
