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
        let receiptData: String
        let orderID: String?
        let transactionID: String?
        let userID: String
        let appVersion: String?
        /// Attempts retry-pending made before this run.
        let attempts: Int
    }

    /// Rows whose verification never completed (Apple or the database was
    /// down, the process died), received before `time`, not given up or
    /// superseded, and whose backoff is over at `now`; oldest first. Only
    /// receipts (`kind`): a `jws` row is open only while the App Store Server
    /// API is asked for a `transaction_id`, or for good if the process died
    /// then, and verifyReceipt can do nothing with it (all such rows hold the
    /// same empty data, so it would also close them as "superseded" by one another).
    /// `receipts_retry_due` holds every other condition, so only the open rows
    /// are read (EXPLAIN on MariaDB 10.11: a range over them, with 200,000
    /// completed and 5,000 given-up rows beside them).
    func due(receivedBefore time: Timestamp, now: Timestamp, limit: Int) throws(MariaDBError) -> [Row] {
        try connection.execute(
            """
            SELECT receipt_id, sha256, receipt_data, order_id, transaction_id, user_id, app_version, retry_attempts
            FROM receipts
            WHERE verified_at IS NULL AND retry_final_state IS NULL AND received_at < ?
              AND (retry_next_at IS NULL OR retry_next_at <= ?) AND kind = 'receipt'
            ORDER BY receipt_id LIMIT ?
            """,
            [.text(time.sql), .text(now.sql), .integer(Int64(limit))]
        ).rows.compactMap { row in
            guard let id = row[0].flatMap({ UInt64($0) }), let sha256 = row[1], let data = row[2],
                  let userID = row[5], let attempts = row[7].flatMap({ Int($0) })
            else { return nil }
            return Row(
                receiptID: id, sha256: sha256, receiptData: data, orderID: row[3], transactionID: row[4],
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
