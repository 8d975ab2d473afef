import IAPCore
import MariaDB

/// The finish worker's statements on `transaction_finishes` (the outbox `FinishOutbox` writes). As
/// for the webhook's `events`, the state lives in the table: a worker that claims a row sets its
/// `lease_expires_at`, so that no other (another iap-fcgi on the same database) calls Apple for it
/// before the lease ends, and records the result only while the row still holds that lease. A lease
/// that ends without a result (the process died) makes the row claimable again.
struct FinishStore: FinishOutboxStore {
    let connection: MariaDBConnection

    /// A row this worker holds the lease of.
    struct Claimed: Sendable {
        let transactionID: String
        let environment: AppleEnvironment
        /// Calls made before this one that got no 2xx.
        let attempts: Int
        /// The lease as written.
        let lease: String
    }

    private var table: FinishOutboxTable {
        FinishOutboxTable(connection: connection, table: "transaction_finishes")
    }

    /// Runs `body` in the outbox's database transaction (`LeasedOutbox.transaction`: READ COMMITTED,
    /// so a delivery writing its row never waits for a claim, and run again whole when it lost to another).
    func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try table.outbox.transaction(body)
    }

    /// Leases up to `limit` rows that are due and not leased, the longest due first. Run it in
    /// `transaction`: `SKIP LOCKED` makes workers claiming at the same moment take different rows, and
    /// the lease is committed before any call starts.
    func lease(upTo limit: Int, now: Timestamp, until lease: String) throws(MariaDBError) -> [Claimed] {
        try table.outbox.lease(
            """
            SELECT transaction_id, environment, attempts FROM transaction_finishes FORCE INDEX (transaction_finishes_due)
            WHERE next_attempt_at <= ? AND (lease_expires_at IS NULL OR lease_expires_at <= ?)
            ORDER BY next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED
            """,
            [.text(now.sql), .text(now.sql), .integer(Int64(limit))], until: lease,
            claimed: { row -> Claimed? in
                guard let transactionID = row[0], let environment = row[1].flatMap(AppleEnvironment.init(rawValue:)),
                      let attempts = row[2].flatMap({ Int($0) })
                else { return nil }
                return Claimed(transactionID: transactionID, environment: environment, attempts: attempts, lease: lease)
            },
            key: { .text($0.transactionID) })
    }

    /// Apple answered 2xx (`FinishOutboxTable.recordFinished`). Run it in `transaction`.
    func recordFinished(_ claimed: Claimed, at time: Timestamp) throws(MariaDBError) -> Bool {
        try table.recordFinished(claimed.transactionID, lease: claimed.lease, at: time)
    }

    /// No 2xx: the row waits until `nextAttemptMs` with `error`, its attempts counted when the call
    /// was made. False as for `recordFinished`.
    func recordFailure(
        _ claimed: Claimed, error: String, nextAttemptMs: Int64, countsAttempt: Bool
    ) throws(MariaDBError) -> Bool {
        try table.recordFailure(
            claimed.transactionID, lease: claimed.lease, error: error, nextAttemptMs: nextAttemptMs,
            countsAttempt: countsAttempt)
    }

    /// The rows waiting, for `iap_transaction_finishes_pending`.
    func pendingCount() throws(MariaDBError) -> Int {
        try connection.execute("SELECT COUNT(*) FROM transaction_finishes").first?[0].flatMap { Int($0) } ?? 0
    }
}
