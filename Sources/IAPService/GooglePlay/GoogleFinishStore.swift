import IAPCore
import MariaDB

/// The worker's statements on `google_finishes` (the outbox `GooglePurchaseDelivery` writes), under
/// the leases every outbox shares (`LeasedOutbox`): several iap-fcgi on one database never call
/// Google twice for one row at once, and a result is recorded only while its lease holds.
struct GoogleFinishStore: FinishOutboxStore {
    let connection: MariaDBConnection

    /// A row this worker holds the lease of, with what its call needs.
    struct Claimed: Sendable {
        let transactionID: String
        let action: GoogleFinishAction
        let packageName: String
        let productID: String
        let purchaseToken: String
        let attempts: Int
        let lease: String
    }

    private var table: FinishOutboxTable {
        FinishOutboxTable(connection: connection, table: "google_finishes")
    }

    func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try table.outbox.transaction(body)
    }

    /// Leases up to `limit` rows due and not leased, the longest due first. Run it in `transaction`.
    func lease(upTo limit: Int, now: Timestamp, until lease: String) throws(MariaDBError) -> [Claimed] {
        try table.outbox.lease(
            """
            SELECT f.transaction_id, f.action, f.package_name, t.product_id, t.purchase_token, f.attempts
            FROM google_finishes f FORCE INDEX (google_finishes_due)
            JOIN transactions t ON t.transaction_id = f.transaction_id
            WHERE f.next_attempt_at <= ? AND (f.lease_expires_at IS NULL OR f.lease_expires_at <= ?)
            ORDER BY f.next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED
            """,
            [.text(now.sql), .text(now.sql), .integer(Int64(limit))], until: lease,
            claimed: { row -> Claimed? in
                guard let transactionID = row[0], let action = row[1].flatMap(GoogleFinishAction.init(rawValue:)),
                    let packageName = row[2], let productID = row[3], let token = row[4],
                    let attempts = row[5].flatMap({ Int($0) })
                else { return nil }
                return Claimed(
                    transactionID: transactionID, action: action, packageName: packageName, productID: productID,
                    purchaseToken: token, attempts: attempts, lease: lease)
            },
            key: { .text($0.transactionID) })
    }

    /// Google took it (`FinishOutboxTable.recordFinished`). Run it in `transaction`.
    func recordFinished(_ claimed: Claimed, at time: Timestamp) throws(MariaDBError) -> Bool {
        try table.recordFinished(claimed.transactionID, lease: claimed.lease, at: time)
    }

    /// No success: the row waits until `nextAttemptMs` with `error`. False as for `recordFinished`.
    func recordFailure(_ claimed: Claimed, error: String, nextAttemptMs: Int64) throws(MariaDBError) -> Bool {
        try table.recordFailure(claimed.transactionID, lease: claimed.lease, error: error, nextAttemptMs: nextAttemptMs)
    }

    /// Seconds since the oldest waiting row was written (0: none), and the least time left before
    /// Google's 3-day deadline of any row (nil: none), for the metrics.
    func backlog(now: Timestamp) throws(MariaDBError) -> (oldestAgeSeconds: Int64, soonestDeadlineSeconds: Int64?) {
        let row = try connection.execute(
            """
            SELECT CAST(UNIX_TIMESTAMP(MIN(created_at)) * 1000 AS SIGNED), CAST(UNIX_TIMESTAMP(MIN(deadline_at)) * 1000 AS SIGNED)
            FROM google_finishes WHERE next_attempt_at < ?
            """, [.text(AppleDate.sqlDateTime(ms: GoogleFinishRetry.givenUpAtMs))]
        ).first
        let oldest = row?[0].flatMap { Int64($0) }.map { max(now.milliseconds - $0, 0) / 1000 } ?? 0
        let deadline = row?[1].flatMap { Int64($0) }.map { ($0 - now.milliseconds) / 1000 }
        return (oldest, deadline)
    }
}
