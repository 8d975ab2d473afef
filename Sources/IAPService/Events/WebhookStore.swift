import IAPCore
import MariaDB

/// The webhook dispatcher's statements on `events`. Its state lives in the
/// table, not in memory, so that a restart or a SIGKILL loses nothing: a row is
/// `pending` until a POST got a 2xx, and a dispatcher that claims one sets its
/// `lease_expires_at`, so that no other (another iap-fcgi on the same database)
/// POSTs it before the lease ends. A lease that ends without a recorded result
/// (the process died) makes the row claimable again: the event is sent again,
/// with the same `event_id`.
struct WebhookStore {
    let connection: MariaDBConnection

    /// An event this dispatcher holds the lease of.
    struct Claimed {
        let event: WebhookEvent
        /// POSTs made before this one.
        let attempts: Int
        /// Where its 72 hours of retries start: its creation, or its last redelivery.
        let retryWindowStartMs: Int64
        /// The lease as written: the result is recorded only while the row still holds it.
        let lease: String
    }

    private var outbox: LeasedOutbox { LeasedOutbox(connection: connection, table: "events", keyColumn: "event_id") }

    /// Runs `body` in the outbox's database transaction (`LeasedOutbox.transaction`: READ COMMITTED,
    /// so a delivery inserting its event never waits for a claim, and run again whole when it lost to
    /// another); `body` must be safe to run again.
    func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try outbox.transaction(body)
    }

    /// Leases up to `limit` events that are due: pending, past their
    /// `next_attempt_at`, not leased, and the first pending event of their user
    /// (one user's events go in order). Run it in `transaction`: the rows are
    /// locked with `SKIP LOCKED`, so that dispatchers claiming at the same moment
    /// take different rows, and the lease is committed before any POST starts.
    /// Returns their ids.
    func lease(upTo limit: Int, now: Timestamp, until lease: String) throws(MariaDBError) -> [String] {
        try outbox.lease(
            """
            SELECT e.event_id FROM events e FORCE INDEX (events_dispatch)
            WHERE e.status = 'pending' AND (e.next_attempt_at IS NULL OR e.next_attempt_at <= ?)
              AND (e.lease_expires_at IS NULL OR e.lease_expires_at <= ?)
              AND NOT EXISTS (
                SELECT 1 FROM events earlier
                WHERE earlier.user_id = e.user_id AND earlier.status = 'pending' AND earlier.event_id < e.event_id)
            LIMIT ? FOR UPDATE SKIP LOCKED
            """,
            [.text(now.sql), .text(now.sql), .integer(Int64(limit))], until: lease,
            claimed: { $0[0] }, key: SQLValue.text)
    }

    /// The leased events, with their transaction and order as they are now.
    func claimed(_ eventIDs: [String], lease: String) throws(MariaDBError) -> [Claimed] {
        var claimed: [Claimed] = []
        for chunk in RowChunks.padded(eventIDs) {
            claimed += try details(of: chunk, lease: lease)
        }
        return claimed
    }

    private func details(of eventIDs: [String], lease: String) throws(MariaDBError) -> [Claimed] {
        try connection.execute(
            """
            SELECT e.event_id, e.type, e.transaction_id, e.original_transaction_id, e.order_id, e.user_id,
              e.product_id, e.quantity, e.environment, \(LeasedOutbox.milliseconds("e.occurred_at")),
              \(LeasedOutbox.milliseconds("COALESCE(e.redelivered_at, e.created_at)")), e.attempts,
              \(LeasedOutbox.milliseconds("t.purchase_date")), t.state, o.product_id, o.price, o.currency, o.status,
              t.revocation_reason, t.revocation_type, t.revocation_percentage,
              r.reason, \(LeasedOutbox.milliseconds("r.deadline_at")),
              e.store, e.refunded_quantity, e.subscription_status, \(LeasedOutbox.milliseconds("e.expires_at")),
              e.auto_renew
            FROM events e
            LEFT JOIN transactions t ON t.transaction_id = e.transaction_id
            LEFT JOIN orders o ON o.order_id = e.order_id
            LEFT JOIN consumption_requests r ON r.transaction_id = e.transaction_id AND r.event_id = e.event_id
            WHERE e.event_id IN (\(SQLPlaceholders.list(eventIDs.count))) AND e.lease_expires_at = ?
            ORDER BY e.event_id
            """,
            eventIDs.map(SQLValue.text) + [.text(lease)]
        ).rows.compactMap { Self.claimed(from: $0, lease: lease) }
    }

    private static func claimed(from row: [String?], lease: String) -> Claimed? {
        guard let eventID = row[0].flatMap({ UInt64($0) }), let type = row[1].flatMap(GameEventType.init(rawValue:)),
            let transactionID = row[2], let originalTransactionID = row[3], let orderID = row[4], let userID = row[5],
            let productID = row[6], let quantity = row[7].flatMap({ Int($0) }), let environment = row[8],
            let occurredAtMs = row[9].flatMap({ Int64($0) }), let windowStartMs = row[10].flatMap({ Int64($0) }),
            let attempts = row[11].flatMap({ Int($0) })
        else { return nil }
        let event = WebhookEvent(
            eventID: eventID, type: type, store: row[23].flatMap(PurchaseStore.init(rawValue:)) ?? .appStore,
            occurredAtMs: occurredAtMs, environment: environment,
            transaction: .init(
                transactionID: transactionID, originalTransactionID: originalTransactionID, productID: productID,
                quantity: quantity, purchaseDateMs: row[12].flatMap { Int64($0) }, state: row[13],
                revocationReason: row[18].flatMap { Int($0) }, revocationType: row[19],
                revocationPercentage: row[20].flatMap { Int($0) }, refundedQuantity: row[24].flatMap { Int($0) }),
            order: .init(
                orderID: orderID, userID: userID, productID: row[14] ?? productID, price: row[15], currency: row[16],
                status: row[17]),
            // deadline_at is NOT NULL: none means the event has no request row.
            refundRequest: row[22].flatMap { Int64($0) }.map { .init(reason: row[21], deadlineAtMs: $0) },
            subscription: row[25].map {
                .init(
                    status: $0, expiresAtMs: row[26].flatMap { Int64($0) }, autoRenew: row[27].map { $0 != "0" },
                    originalTransactionID: originalTransactionID)
            })
        return Claimed(event: event, attempts: attempts, retryWindowStartMs: windowStartMs, lease: lease)
    }

    /// POSTs of events claimed together (one lease) got a 2xx. Returns the
    /// events whose row no longer holds the lease (it ended and another
    /// dispatcher took the event: that one records it).
    func recordSent(_ claimed: [Claimed], lease: String, at time: Timestamp) throws(MariaDBError) -> [UInt64] {
        var lost: [UInt64] = []
        for chunk in RowChunks.padded(claimed.map(\.event.eventID)) {
            let updated = try connection.execute(
                """
                UPDATE events SET status = 'sent', sent_at = ?, attempts = attempts + 1, next_attempt_at = NULL,
                  lease_expires_at = NULL
                WHERE event_id IN (\(SQLPlaceholders.list(chunk.count))) AND status = 'pending' AND lease_expires_at = ?
                """,
                [.text(time.sql)] + chunk.map { .integer(Int64($0)) } + [.text(lease)]
            ).affectedRows
            let unique = Set(chunk)
            if updated < unique.count {
                let held = try connection.execute(
                    """
                    SELECT event_id FROM events WHERE event_id IN (\(SQLPlaceholders.list(chunk.count))) AND sent_at = ?
                    """,
                    chunk.map { .integer(Int64($0)) } + [.text(time.sql)]
                ).rows.compactMap { $0[0].flatMap { UInt64($0) } }
                lost += unique.subtracting(held).sorted()
            }
        }
        return lost
    }

    /// A POST failed with `error`: the event waits for its retry, or is
    /// `failed` when `decision` gives up. False as for `recordSent`.
    func recordFailure(_ claimed: Claimed, error: String, decision: WebhookRetryPolicy.Decision) throws(MariaDBError)
        -> Bool
    {
        let status: String
        let nextAttempt: SQLValue
        switch decision {
        case .retry(let atMs):
            status = "pending"
            nextAttempt = .text(AppleDate.sqlDateTime(ms: atMs))
        case .giveUp:
            status = "failed"
            nextAttempt = .null
        }
        return try outbox.recordWhileLeased(
            """
            UPDATE events SET status = ?, attempts = attempts + 1, last_error = ?, next_attempt_at = ?,
              lease_expires_at = NULL
            WHERE event_id = ? AND status = 'pending' AND lease_expires_at = ?
            """,
            [.text(status), .text(String(error.prefix(255))), nextAttempt, .integer(Int64(claimed.event.eventID))],
            lease: claimed.lease)
    }
}
