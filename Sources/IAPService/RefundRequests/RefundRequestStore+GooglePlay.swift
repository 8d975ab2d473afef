import IAPCore
import MariaDB

/// The ledger's statements for Google Play's refund reviews, run in the database
/// transaction that stores the notification (`GoogleRefundReviewIntake`) or applies
/// the refund (`GoogleVoidedPurchaseLedger`). A review's row is found by its order
/// id, which is its purchase's transaction id here.
extension RefundRequestStore {
    /// What a `pendingRefundReviewNotification` asks, as its row records it.
    struct GooglePlayAsked {
        /// The purchase's transaction ids here; Google's order id for an order not here.
        let transactionID: String
        let originalTransactionID: String
        let messageID: String
        let pendingRefundToken: String
        /// Google's order id (`GPA.…`).
        let orderID: String
        let environment: AppleEnvironment
        let userID: String?
        /// Empty when neither the purchase nor an order here names it.
        let productID: String
        let reason: String?
        /// `eventTimeMillis`: when Google asked.
        let requestedAtMs: Int64
    }

    /// A new review, `pending`, due at once, to be answered within Google's window.
    func insert(_ asked: GooglePlayAsked, eventID: UInt64?, at time: Timestamp) throws(MariaDBError) {
        let deadlineMs = asked.requestedAtMs + GoogleRefundReviewRequest.answerWindowMs
        try connection.execute(
            """
            INSERT INTO consumption_requests (store, transaction_id, original_transaction_id, google_message_id,
              pending_refund_token, order_id, environment, user_id, product_id, reason, requested_at, deadline_at,
              status, event_id, created_at)
            VALUES ('google_play', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)
            """,
            [
                .text(asked.transactionID), .text(asked.originalTransactionID), .text(asked.messageID),
                .text(asked.pendingRefundToken), .text(asked.orderID), .text(asked.environment.rawValue),
                .optional(asked.userID), .text(asked.productID), .optional(asked.reason),
                .text(AppleDate.sqlDateTime(ms: asked.requestedAtMs)), .text(AppleDate.sqlDateTime(ms: deadlineMs)),
                Self.optional(eventID), .text(time.sql),
            ]
        ).requireRows(1, "INSERT INTO consumption_requests (google_play)")
    }

    /// The pending refund tokens of the order's reviews, their rows locked until the database
    /// transaction ends (the order's purchase row is locked first, when there is one).
    func reviewTokensLocked(orderID: String) throws(MariaDBError) -> [String] {
        try connection.execute(
            """
            SELECT pending_refund_token FROM consumption_requests
            WHERE transaction_id = ? AND store = 'google_play' FOR UPDATE
            """,
            [.text(orderID)]
        ).rows.compactMap { $0[0] }
    }

    /// Google refunded the order (in whole or in part) at `refundedAtMs`: its reviews not yet decided
    /// get the outcome `refunded`, so an operator sees what answering did, and a review still pending is
    /// closed unanswered by the sender (no answer counts any more). Run in the database transaction
    /// that applies the refund, after it locked the purchase row.
    func recordGoogleRefund(orderID: String, refundedAtMs: Int64) throws(MariaDBError) {
        try connection.execute(
            """
            UPDATE consumption_requests SET outcome = 'refunded', outcome_at = ?
            WHERE transaction_id = ? AND store = 'google_play' AND outcome IS NULL
            """,
            [.text(AppleDate.sqlDateTime(ms: refundedAtMs)), .text(orderID)])
    }
}
