import IAPCore
import MariaDB

/// A Google Play refund review (`pendingRefundReviewNotification`) written to
/// the refund-request ledger the App Store's requests use (docs/events.md
/// "Refund requests"), in the database transaction that stores the
/// notification: a `consumption_requests` row of store `google_play` with the
/// review's `pendingRefundToken`, Google's order id, its reason and a deadline
/// 24 hours after `eventTimeMillis`, and, when the order was delivered here, a
/// `refund_requested` event for the game. The sender answers the row with
/// `orders.reviewrefund`.
///
/// The request is the order's purchase's when the ledger holds it. A review of
/// an order not here is written all the same, so that support sees it: its
/// user is the one of our order its `obfuscatedAccountId` names (the app passes
/// our order id to the billing flow), else nobody, and a request nobody has
/// consented for is closed `no_consent` by the sender, nothing sent.
struct GoogleRefundReviewIntake {
    let connection: MariaDBConnection

    struct Review {
        let messageID: String
        let pendingRefundToken: String
        /// Google's order id (`GPA.…`), the transaction id of its purchase here.
        let orderID: String
        let reason: String?
        let obfuscatedAccountID: String?
        /// `eventTimeMillis`: when Google asked.
        let requestedAtMs: Int64
    }

    /// Writes the review; `unchanged` when the ledger has its token already (Google pushed it
    /// again under another message id).
    /// A review whose token or order id does not fit its ASCII column is only stored (`stored`): it
    /// could never be answered, and failing would have Pub/Sub push it forever.
    func note(_ review: Review, at now: Timestamp) throws(MariaDBError) -> GoogleNotificationEffect {
        guard Self.fits(review.pendingRefundToken, maxLength: 4096), Self.fits(review.orderID, maxLength: 64) else {
            return .stored
        }
        let purchase = try GoogleNotificationStore(connection: connection).lockedPurchase(orderID: review.orderID)
        guard try !isRecorded(review) else { return .unchanged }
        let delivered = purchase?.orderID != nil && purchase?.userID != nil
        let accountOrder = try delivered ? nil : accountOrder(review.obfuscatedAccountID)
        let environment = purchase?.environment ?? .production
        let deadlineMs = review.requestedAtMs + GoogleRefundReviewRequest.answerWindowMs
        var eventID: UInt64?
        if let purchase, let orderID = purchase.orderID, let userID = purchase.userID {
            let transaction = AppleTransaction(
                transactionID: purchase.transactionID, originalTransactionID: purchase.originalTransactionID,
                productID: purchase.productID, quantity: purchase.quantity)
            eventID = try EventStore(connection: connection).recordOne(
                EventStore.NewEvent(
                    .refundRequested, transaction, orderID: orderID, userID: userID, environment: environment,
                    occurredAtMs: review.requestedAtMs, store: .googlePlay),
                at: now)
        }
        try connection.execute(
            """
            INSERT INTO consumption_requests (store, transaction_id, original_transaction_id, google_message_id,
              pending_refund_token, order_id, environment, user_id, product_id, reason, requested_at, deadline_at,
              status, event_id, created_at)
            VALUES ('google_play', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)
            """,
            [
                .text(purchase?.transactionID ?? review.orderID),
                .text(purchase?.originalTransactionID ?? review.orderID), .text(review.messageID),
                .text(review.pendingRefundToken), .text(review.orderID), .text(environment.rawValue),
                .optional(purchase?.userID ?? accountOrder?.userID),
                .text(purchase?.productID ?? accountOrder?.productID ?? ""),
                .optional(RefundRequestText.column(review.reason)),
                .text(AppleDate.sqlDateTime(ms: review.requestedAtMs)), .text(AppleDate.sqlDateTime(ms: deadlineMs)),
                eventID.map { .integer(Int64($0)) } ?? .null, .text(now.sql),
            ]
        ).requireRows(1, "INSERT INTO consumption_requests (google_play)")
        return .refundRequested
    }

    /// Google refunded the order (in whole or in part) at `refundedAtMs`: its reviews not yet decided
    /// get the outcome `refunded`, so an operator sees what answering did, and a review still pending is
    /// closed unanswered by the sender (no answer counts any more). Run in the database transaction
    /// that applies the refund, after it locked the purchase row.
    func noteRefunded(orderID: String, refundedAtMs: Int64) throws(MariaDBError) {
        try connection.execute(
            """
            UPDATE consumption_requests SET outcome = 'refunded', outcome_at = ?
            WHERE transaction_id = ? AND store = 'google_play' AND outcome IS NULL
            """,
            [.text(AppleDate.sqlDateTime(ms: refundedAtMs)), .text(orderID)])
    }

    /// Whether a request of the order already carries this review's token, its rows locked until the
    /// database transaction ends (the order's purchase row is locked first, when there is one).
    private func isRecorded(_ review: Review) throws(MariaDBError) -> Bool {
        try connection.execute(
            """
            SELECT pending_refund_token FROM consumption_requests
            WHERE transaction_id = ? AND store = 'google_play' FOR UPDATE
            """,
            [.text(review.orderID)]
        ).rows.contains { $0[0] == review.pendingRefundToken }
    }

    private static func fits(_ text: String, maxLength: Int) -> Bool {
        text.utf8.count <= maxLength && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// Our order the review's `obfuscatedAccountId` names; nil when it names none. Read without a lock:
    /// an order's user and product never change.
    private func accountOrder(_ accountID: String?) throws(MariaDBError) -> RequestOrder? {
        guard let orderID = accountID.flatMap(GoogleAccountProof.orderID(named:)) else { return nil }
        return try OrderStore(connection: connection).order(orderID)
    }
}
