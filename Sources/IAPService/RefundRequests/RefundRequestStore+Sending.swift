import IAPCore
import MariaDB

/// The sender's statements (`RefundRequestSender`). As for the webhook's
/// events (`WebhookStore`), the state lives in the table: a sender leases a
/// due row (`lease_expires_at`) in a committed transaction before it calls
/// the store, so that no other iap-fcgi on the same database (or Galera cluster)
/// sends the same request; a lease that ends without a recorded result (the
/// process died) makes the row due again.
extension RefundRequestStore {
    /// What answering a Google Play refund review needs beyond the decision: where the call goes and the token.
    struct GoogleReview {
        let packageName: String
        let orderID: String
        let pendingRefundToken: String
    }

    /// A request this sender holds the lease of, with what its answer is decided from.
    struct Claimed {
        let requestID: UInt64
        let transactionID: String
        let store: PurchaseStore
        /// A Google Play review's call; nil for the App Store's requests (and a review whose notification is gone).
        let review: GoogleReview?
        let environment: AppleEnvironment
        let deadlineMs: Int64
        let createdAtMs: Int64
        /// PUTs made before this one.
        let attempts: Int
        /// The `refund_requested` event is still `pending`; nil without an event.
        let eventPending: Bool?
        /// The store's decision, when it came first: then nothing is sent.
        let outcome: RefundRequestOutcome?
        let facts: RefundRequestDecision.Facts
        /// The lease as written: results are recorded only while the row still holds it.
        let lease: String
    }

    private var outbox: LeasedOutbox {
        LeasedOutbox(connection: connection, table: "consumption_requests", keyColumn: "request_id")
    }

    /// Leases the oldest due request of one of `stores` (those this sender can answer): pending, past
    /// its `next_attempt_at`, not leased. Committed before it returns (`LeasedOutbox.transaction`; on
    /// Galera, a sender that leased the same row on another node loses at
    /// commit and runs again, finding it leased). Returns its id, nil when none is due.
    func leaseNext(of stores: [PurchaseStore], now: Timestamp, until lease: String) throws -> UInt64? {
        let storeList = Array(repeating: "?", count: stores.count).joined(separator: ", ")
        return try outbox.transaction {
            try outbox.lease(
                """
                SELECT request_id FROM consumption_requests FORCE INDEX (consumption_requests_dispatch)
                WHERE status = 'pending' AND store IN (\(storeList)) AND (next_attempt_at IS NULL OR next_attempt_at <= ?)
                  AND (lease_expires_at IS NULL OR lease_expires_at <= ?)
                ORDER BY next_attempt_at, request_id LIMIT 1 FOR UPDATE SKIP LOCKED
                """,
                stores.map { .text($0.rawValue) } + [.text(now.sql), .text(now.sql)], until: lease,
                claimed: { $0[0].flatMap { UInt64($0) } }, key: { .integer(Int64($0)) }
            ).first
        }
    }

    /// The leased request with its transaction, the game's consumption, the
    /// product's policy and the user's consent as they are now; nil when the
    /// row no longer holds `lease`.
    func claimed(_ requestID: UInt64, lease: String) throws(MariaDBError) -> Claimed? {
        guard let row = try connection.execute(
            """
            SELECT r.request_id, r.transaction_id, r.environment, \(LeasedOutbox.milliseconds("r.deadline_at")),
              \(LeasedOutbox.milliseconds("r.created_at")), r.attempts, e.status, r.product_type, r.game_consumed_milli,
              t.delivered_at IS NOT NULL, c.consumed_milli, p.refund_preference, p.sample_content_provided,
              \(LeasedOutbox.milliseconds("cc.consented_at")), \(LeasedOutbox.milliseconds("cc.withdrawn_at")),
              r.outcome, r.store, g.package_name, r.order_id, r.pending_refund_token
            FROM consumption_requests r
            LEFT JOIN google_notifications g ON g.message_id = r.google_message_id
            LEFT JOIN events e ON e.event_id = r.event_id
            LEFT JOIN transactions t ON t.transaction_id = r.transaction_id
            LEFT JOIN consumption c ON c.transaction_id = r.transaction_id
            LEFT JOIN products p ON p.product_id = r.product_id
            LEFT JOIN consumption_consent cc ON cc.user_id = COALESCE(r.user_id, t.user_id)
            WHERE r.request_id = ? AND r.lease_expires_at = ? AND r.status = 'pending'
            """,
            [.integer(Int64(requestID)), .text(lease)]
        ).rows.first else { return nil }
        return Self.claimed(from: row, lease: lease)
    }

    private static func claimed(from row: [String?], lease: String) -> Claimed? {
        guard let requestID = row[0].flatMap({ UInt64($0) }), let transactionID = row[1],
            let environment = row[2].flatMap(AppleEnvironment.init(rawValue:)),
            let deadlineMs = row[3].flatMap({ Int64($0) }), let createdAtMs = row[4].flatMap({ Int64($0) }),
            let attempts = row[5].flatMap({ Int($0) }), let store = row[16].flatMap(PurchaseStore.init(rawValue:))
        else { return nil }
        let consent = row[13].flatMap { Int64($0) }.map {
            ConsumptionConsent(consentedAtMs: $0, withdrawnAtMs: row[14].flatMap { Int64($0) })
        }
        let facts = RefundRequestDecision.Facts(
            delivered: row[9] == "1", answeredConsumedMilli: row[8].flatMap { Int($0) },
            recordedConsumedMilli: row[10].flatMap { Int($0) },
            policy: row[11].flatMap(RefundPolicy.init(rawValue:)) ?? .none, consent: consent,
            isAutoRenewableSubscription: row[7] == AppStoreConsumptionRequest.autoRenewableProductType,
            sampleContentProvided: row[12] == "1")
        var review: GoogleReview?
        if store == .googlePlay, let packageName = row[17], let orderID = row[18], let token = row[19] {
            review = GoogleReview(packageName: packageName, orderID: orderID, pendingRefundToken: token)
        }
        return Claimed(
            requestID: requestID, transactionID: transactionID, store: store, review: review,
            environment: environment, deadlineMs: deadlineMs,
            createdAtMs: createdAtMs, attempts: attempts, eventPending: row[6].map { $0 == "pending" },
            outcome: row[15].flatMap(RefundRequestOutcome.init(rawValue:)), facts: facts, lease: lease)
    }

    /// Apple's decision on the request as it stands now (it may have arrived during the PUT); nil: none yet.
    func outcome(of claimed: Claimed) throws(MariaDBError) -> RefundRequestOutcome? {
        try connection.execute(
            "SELECT outcome FROM consumption_requests WHERE request_id = ?", [.integer(Int64(claimed.requestID))]
        ).first?[0].flatMap(RefundRequestOutcome.init(rawValue:))
    }

    /// Not yet: looked at again at `atMs`, the lease given back (no PUT was made).
    func postpone(_ claimed: Claimed, untilMs atMs: Int64) throws(MariaDBError) {
        _ = try outbox.recordWhileLeased(
            """
            UPDATE consumption_requests SET next_attempt_at = ?, lease_expires_at = NULL
            WHERE request_id = ? AND status = 'pending' AND lease_expires_at = ?
            """,
            [.text(AppleDate.sqlDateTime(ms: atMs)), .integer(Int64(claimed.requestID))], lease: claimed.lease)
    }

    /// Closed without a PUT: `no_consent`, or `expired` when Apple decided or its deadline passed first.
    func closeUnsent(_ claimed: Claimed, status: RefundRequestStatus, error: String?) throws(MariaDBError) {
        _ = try outbox.recordWhileLeased(
            """
            UPDATE consumption_requests SET status = ?, last_error = COALESCE(?, last_error), next_attempt_at = NULL,
              lease_expires_at = NULL
            WHERE request_id = ? AND status = 'pending' AND lease_expires_at = ?
            """,
            [.text(status.rawValue), error.map(SQLValue.text) ?? .null, .integer(Int64(claimed.requestID))],
            lease: claimed.lease)
    }

    /// Records a PUT of `body` and what came of it. False when the row no longer
    /// held the lease (it ended, and another sender took the request).
    func recordPut(
        _ claimed: Claimed, body: String, preference: String?, outcome: RefundRequestRetryPolicy.Outcome, at time: Timestamp
    ) throws(MariaDBError) -> Bool {
        let status: String
        var nextAttempt = SQLValue.null
        var error: SQLValue = .null
        var sentAt = SQLValue.null
        switch outcome {
        case .sent:
            status = "sent"
            sentAt = .text(time.sql)
        case .retry(let atMs, let reason):
            status = "pending"
            nextAttempt = .text(AppleDate.sqlDateTime(ms: atMs))
            error = .text(String(reason.prefix(255)))
        case .expired(let reason):
            status = "expired"
            error = .text(String(reason.prefix(255)))
        case .failed(let reason):
            status = "failed"
            error = .text(String(reason.prefix(255)))
        }
        return try outbox.recordWhileLeased(
            """
            UPDATE consumption_requests SET status = ?, attempts = attempts + 1, next_attempt_at = ?,
              last_error = COALESCE(?, last_error), sent_at = ?, sent_body = ?, refund_preference_sent = ?,
              lease_expires_at = NULL
            WHERE request_id = ? AND status = 'pending' AND lease_expires_at = ?
            """,
            [.text(status), nextAttempt, error, sentAt, .text(body), preference.map(SQLValue.text) ?? .null,
             .integer(Int64(claimed.requestID))],
            lease: claimed.lease)
    }
}
