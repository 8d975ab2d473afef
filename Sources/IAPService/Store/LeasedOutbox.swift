import IAPCore
import MariaDB

/// What the service's three outboxes share: `events` (the webhook's POSTs, `WebhookStore`),
/// `transaction_finishes` (Finish Transaction, `FinishStore`) and `consumption_requests` (refund
/// answers to the stores, `RefundRequestStore`). Their state lives in the table: a worker leases the due
/// rows (`lease_expires_at`) in a database transaction it commits before any call starts, makes the
/// calls outside it, and records each answer only while the row still holds its lease. Several
/// iap-fcgi on one database, or on a Galera cluster, so never make one row's call twice at once: two
/// workers selecting together take different rows (`SKIP LOCKED`), and on Galera the one that leased a
/// row through another node loses at commit (1213), runs again and finds it leased. A lease that ends
/// without a recorded answer (the process died) makes the row due again.
///
/// Each store keeps what is its own: which rows are due, in what order, what a claimed row carries,
/// and what an answer writes.
struct LeasedOutbox {
    let connection: MariaDBConnection
    /// The outbox's table and its key column, as the statements name them.
    let table: String
    let keyColumn: String

    /// Runs of a database transaction that lost to another, in all, before it is given up.
    static let attempts = 3

    /// Runs `body` in a READ COMMITTED database transaction: its locking reads take no gap locks,
    /// so a delivery writing a row never waits for a claim. One that lost to another (a deadlock,
    /// a lock wait timeout, a Galera certification conflict: 1213) runs again whole, up to
    /// `attempts` in all; `body` must be safe to run again.
    func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try connection.transactionRetryingDeadlocks(attempts: Self.attempts, readCommitted: true, body)
    }

    /// Selects the due rows with `dueRows` (a `SELECT … FOR UPDATE SKIP LOCKED`), reads each with
    /// `claimed` (nil: left alone), and writes `lease` into the `lease_expires_at` of those read,
    /// found by their `key` (the key column's value as bound).
    /// Run it in `transaction`, so that the lease is committed before any call starts.
    func lease<Claimed>(
        _ dueRows: String, _ parameters: [SQLValue], until lease: String,
        claimed: ([String?]) -> Claimed?, key: (Claimed) -> SQLValue
    ) throws(MariaDBError) -> [Claimed] {
        let leased = try connection.execute(dueRows, parameters).rows.compactMap(claimed)
        for chunk in RowChunks.padded(leased.map(key)) {
            try connection.execute(
                "UPDATE \(table) SET lease_expires_at = ? WHERE \(keyColumn) IN (\(SQLPlaceholders.list(chunk.count)))",
                [.text(lease)] + chunk)
        }
        return leased
    }

    /// Records an answer with `statement`, an UPDATE or DELETE of one row whose last condition is
    /// `lease_expires_at = ?`: `lease` is bound to it after `parameters`. False when the row no
    /// longer held the lease (it ended, and another worker took the row: that one records its own call).
    func recordWhileLeased(_ statement: String, _ parameters: [SQLValue], lease: String) throws(MariaDBError) -> Bool {
        try connection.execute(statement, parameters + [.text(lease)]).affectedRows == 1
    }

    /// A DATETIME(3) column as UTC milliseconds (sessions are in UTC), for reading claimed rows.
    static func milliseconds(_ column: String) -> String {
        "CAST(UNIX_TIMESTAMP(\(column)) * 1000 AS SIGNED)"
    }
}
