import IAPCore
import MariaDB

/// SQL of the refund-request ledger as notifications and the webhook write it
/// (`consumption_requests`, docs/events.md "Refund requests"). The notification's
/// statements run in the database transaction that stores it; the sender
/// (another file) leases and answers the rows they leave `pending`.
struct RefundRequestStore {
    let connection: MariaDBConnection

    /// A transaction's newest request as the ledger's decision needs it, and the event the game was told with.
    struct Latest {
        let request: StoredRefundRequest
        let eventID: UInt64?
    }

    /// What a `CONSUMPTION_REQUEST` asks, as its row records it.
    struct Asked {
        let transactionID: String
        let originalTransactionID: String
        let notificationUUID: String
        let environment: AppleEnvironment
        /// The user the transaction was delivered to here, else the user of the order its
        /// `appAccountToken` names; nil: neither.
        let userID: String?
        let productID: String
        /// Apple's `type` of the transaction (`Consumable`, ...), nil when it does not fit the column.
        let productType: String?
        let reason: String?
        /// The notification's `signedDate`, ms.
        let requestedAtMs: Int64
    }

    /// The transaction's newest request, locked until the database transaction
    /// ends (two notifications of one transaction change the ledger one after
    /// the other); nil when it has none.
    func latestLocked(_ transactionID: String) throws(MariaDBError) -> Latest? {
        guard let row = try connection.execute(
            """
            SELECT request_id, status, \(Self.milliseconds("requested_at")), \(Self.milliseconds("outcome_at")), event_id
            FROM consumption_requests WHERE transaction_id = ? ORDER BY request_id DESC LIMIT 1 FOR UPDATE
            """,
            [.text(transactionID)]
        ).first, let requestID = row[0].flatMap({ UInt64($0) }),
            let status = row[1].flatMap(RefundRequestStatus.init(rawValue:)),
            let requestedAtMs = row[2].flatMap({ Int64($0) })
        else { return nil }
        return Latest(
            request: StoredRefundRequest(
                requestID: requestID, status: status, requestedAtMs: requestedAtMs,
                outcomeAtMs: row[3].flatMap { Int64($0) }),
            eventID: row[4].flatMap { UInt64($0) })
    }

    /// A new request, `pending`, to be answered at once.
    func insert(_ asked: Asked, eventID: UInt64?, at time: Timestamp) throws(MariaDBError) {
        try connection.execute(
            """
            INSERT INTO consumption_requests (store, transaction_id, original_transaction_id, notification_uuid,
              environment, user_id, product_id, product_type, reason, requested_at, deadline_at, status, event_id,
              created_at)
            VALUES ('app_store', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)
            """,
            [.text(asked.transactionID), .text(asked.originalTransactionID)] + Self.askedValues(asked)
                + [Self.optional(eventID), .text(time.sql)]
        ).requireRows(1, "INSERT INTO consumption_requests")
    }

    /// Apple asks again about a request not sent yet: it takes the new
    /// notification and deadline and is `pending` again. One waiting out a
    /// backoff keeps it (a 429's `Retry-After`); one that had stopped is due at
    /// once. `eventID` is kept only when the row has none yet.
    func reopen(_ requestID: UInt64, _ asked: Asked, eventID: UInt64?) throws(MariaDBError) {
        // MariaDB assigns left to right: next_attempt_at reads the status before it changes.
        try connection.execute(
            """
            UPDATE consumption_requests SET notification_uuid = ?, environment = ?, user_id = ?, product_id = ?,
              product_type = ?, reason = ?, requested_at = ?, deadline_at = ?,
              next_attempt_at = IF(status = 'pending', next_attempt_at, NULL), status = 'pending',
              event_id = COALESCE(event_id, ?)
            WHERE request_id = ?
            """,
            Self.askedValues(asked) + [Self.optional(eventID), .integer(Int64(requestID))]
        ).requireRows(1, "UPDATE consumption_requests asked again")
    }

    /// Apple's decision on the request, signed at `decidedAtMs`.
    func close(_ requestID: UInt64, _ outcome: RefundRequestOutcome, decidedAtMs: Int64) throws(MariaDBError) {
        try connection.execute(
            "UPDATE consumption_requests SET outcome = ?, outcome_at = ? WHERE request_id = ?",
            [.text(outcome.rawValue), .text(AppleDate.sqlDateTime(ms: decidedAtMs)), .integer(Int64(requestID))]
        ).requireRows(1, "UPDATE consumption_requests outcome")
    }

    /// What the game answered to the `refund_requested` event `eventID` of
    /// `transactionID` (its webhook's 2xx body): it wins over the `consumption`
    /// table when the sender builds its answer. Run in the database transaction
    /// that marks the event sent, so the sender, which waits for that, sees both.
    func recordGameConsumption(eventID: UInt64, transactionID: String, milli: Int) throws(MariaDBError) {
        try connection.execute(
            "UPDATE consumption_requests SET game_consumed_milli = ? WHERE transaction_id = ? AND event_id = ?",
            [.integer(Int64(milli)), .text(transactionID), .integer(Int64(eventID))])
    }

    /// notification_uuid, environment, user_id, product_id, product_type, reason, requested_at, deadline_at.
    private static func askedValues(_ asked: Asked) -> [SQLValue] {
        [
            .text(asked.notificationUUID), .text(asked.environment.rawValue), .optional(asked.userID),
            .text(asked.productID), .optional(asked.productType), .optional(asked.reason),
            .text(AppleDate.sqlDateTime(ms: asked.requestedAtMs)),
            .text(AppleDate.sqlDateTime(ms: RefundRequestChange.deadline(requestedAtMs: asked.requestedAtMs))),
        ]
    }

    private static func optional(_ id: UInt64?) -> SQLValue {
        id.map { .integer(Int64($0)) } ?? .null
    }

    /// A DATETIME(3) column as UTC milliseconds (sessions are in UTC).
    private static func milliseconds(_ column: String) -> String {
        "CAST(ROUND(UNIX_TIMESTAMP(\(column)) * 1000) AS SIGNED)"
    }
}
