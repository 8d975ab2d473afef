import IAPCore
import MariaDB

/// A finish outbox's table (`transaction_finishes` for Apple, `google_finishes` for Google): one
/// row per transaction owed a store's finish call, keyed by `transaction_id`, under the leases
/// every outbox shares (`LeasedOutbox`). What the two stores do alike: a call the store took sets
/// the transaction's `finished_at` and removes its row; one it did not take makes the row wait.
/// Which rows are due, and what a claimed row carries, stay each store's own.
struct FinishOutboxTable {
    let outbox: LeasedOutbox

    init(connection: MariaDBConnection, table: String) {
        outbox = LeasedOutbox(connection: connection, table: table, keyColumn: "transaction_id")
    }

    /// The store took the call: `finished_at` set and the row gone. Run it in the outbox's
    /// transaction. False when the row no longer held `lease` (it ended, and another worker took
    /// it: that one records its own call); `finished_at` is set all the same, since the store took
    /// this one.
    func recordFinished(_ transactionID: String, lease: String, at time: Timestamp) throws(MariaDBError) -> Bool {
        try outbox.connection.execute(
            "UPDATE transactions SET finished_at = ? WHERE transaction_id = ? AND finished_at IS NULL",
            [.text(time.sql), .text(transactionID)])
        return try outbox.recordWhileLeased(
            "DELETE FROM \(outbox.table) WHERE transaction_id = ? AND lease_expires_at = ?", [.text(transactionID)],
            lease: lease)
    }

    /// No success: the row waits until `nextAttemptMs` with `error` (its first 255 characters),
    /// one more attempt counted when `countsAttempt`. False as for `recordFinished`.
    func recordFailure(
        _ transactionID: String, lease: String, error: String, nextAttemptMs: Int64, countsAttempt: Bool = true
    ) throws(MariaDBError) -> Bool {
        try outbox.recordWhileLeased(
            """
            UPDATE \(outbox.table) SET attempts = attempts + ?, last_error = ?, next_attempt_at = ?,
              lease_expires_at = NULL
            WHERE transaction_id = ? AND lease_expires_at = ?
            """,
            [
                .integer(countsAttempt ? 1 : 0), .text(String(error.prefix(255))),
                .text(AppleDate.sqlDateTime(ms: nextAttemptMs)), .text(transactionID),
            ],
            lease: lease)
    }
}
