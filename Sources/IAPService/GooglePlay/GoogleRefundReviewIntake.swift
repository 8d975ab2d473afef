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
        let requests = RefundRequestStore(connection: connection)
        guard try !requests.reviewTokensLocked(orderID: review.orderID).contains(review.pendingRefundToken) else {
            return .unchanged
        }
        let delivered = purchase?.orderID != nil && purchase?.userID != nil
        let accountOrder = try delivered ? nil : accountOrder(review.obfuscatedAccountID)
        let environment = purchase?.environment ?? .production
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
        try requests.insert(
            RefundRequestStore.GooglePlayAsked(
                transactionID: purchase?.transactionID ?? review.orderID,
                originalTransactionID: purchase?.originalTransactionID ?? review.orderID, messageID: review.messageID,
                pendingRefundToken: review.pendingRefundToken, orderID: review.orderID, environment: environment,
                userID: purchase?.userID ?? accountOrder?.userID,
                productID: purchase?.productID ?? accountOrder?.productID ?? "",
                reason: RefundRequestText.column(review.reason), requestedAtMs: review.requestedAtMs),
            eventID: eventID, at: now)
        return .refundRequested
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
