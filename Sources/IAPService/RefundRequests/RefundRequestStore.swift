import IAPCore
import MariaDB

/// Every statement that writes the refund-request ledger (`consumption_requests`,
/// docs/events.md "Refund requests"), and the reads its writers decide from. The
/// notifications' statements (here for the App Store, in `RefundRequestStore+GooglePlay`
/// for Google Play) and the webhook's run in the database transaction that stores
/// what they record; the sender's (`RefundRequestStore+Sending`) lease and answer the
/// rows they leave `pending`; the console's and `iapctl`'s "send now" queue one again.
struct RefundRequestStore {
    let connection: MariaDBConnection

    /// A transaction's newest request as the ledger's decision needs it, and the event the game was told with.
    struct Latest {
        let request: StoredRefundRequest
        let eventID: UInt64?
    }

    /// What a `CONSUMPTION_REQUEST` asks, as its row records it.
    struct AppStoreAsked {
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

    /// The transaction's newest request; nil when it has none. `locking`: locked until the
    /// database transaction ends (two notifications of one transaction change the ledger one
    /// after the other).
    func latest(of transactionID: String, locking: Bool) throws(MariaDBError) -> Latest? {
        guard let row = try connection.execute(
            """
            SELECT request_id, status, \(LeasedOutbox.milliseconds("requested_at")),
              \(LeasedOutbox.milliseconds("outcome_at")), event_id
            FROM consumption_requests WHERE transaction_id = ? ORDER BY request_id DESC LIMIT 1
            """ + (locking ? " FOR UPDATE" : ""),
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

    /// A new App Store request, `pending`, to be answered at once.
    func insert(_ asked: AppStoreAsked, eventID: UInt64?, at time: Timestamp) throws(MariaDBError) {
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
    func reopen(_ requestID: UInt64, _ asked: AppStoreAsked, eventID: UInt64?) throws(MariaDBError) {
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
    func recordOutcome(_ requestID: UInt64, _ outcome: RefundRequestOutcome, decidedAtMs: Int64) throws(MariaDBError) {
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

    /// "Send now": the request back to `pending`, due at once, when it may still be
    /// answered (pending or failed, before its deadline, not decided by the store, not
    /// held by a sender). False when it was not.
    func queueNow(_ requestID: UInt64) throws(MariaDBError) -> Bool {
        try connection.execute(
            """
            UPDATE consumption_requests SET status = 'pending', next_attempt_at = UTC_TIMESTAMP(3)
            WHERE request_id = ? AND status IN ('pending', 'failed') AND deadline_at > UTC_TIMESTAMP(3) AND outcome IS NULL
              AND (lease_expires_at IS NULL OR lease_expires_at < UTC_TIMESTAMP(3))
            """,
            [.integer(Int64(requestID))]
        ).matchedRows == 1
    }

    /// Whether the ledger has the request.
    func exists(_ requestID: UInt64) throws(MariaDBError) -> Bool {
        try connection.execute(
            "SELECT 1 FROM consumption_requests WHERE request_id = ?", [.integer(Int64(requestID))]
        ).first != nil
    }

    /// notification_uuid, environment, user_id, product_id, product_type, reason, requested_at, deadline_at.
    private static func askedValues(_ asked: AppStoreAsked) -> [SQLValue] {
        [
            .text(asked.notificationUUID), .text(asked.environment.rawValue), .optional(asked.userID),
            .text(asked.productID), .optional(asked.productType), .optional(asked.reason),
            .text(AppleDate.sqlDateTime(ms: asked.requestedAtMs)),
            .text(AppleDate.sqlDateTime(ms: RefundRequestChange.deadline(requestedAtMs: asked.requestedAtMs))),
        ]
    }

    static func optional(_ id: UInt64?) -> SQLValue {
        id.map { .integer(Int64($0)) } ?? .null
    }
}
