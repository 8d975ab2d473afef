import IAPCore
import MariaDB

/// Delivers one paid Google Play purchase exactly once, through the same `Delivery` as Apple's
/// transactions: one `transactions` row (its primary key, Google's order id or the token's `GP-`
/// id, makes two requests for one purchase deliver once), the order paid or made, a `delivered`
/// event. In the same database transaction the row and its event are marked `google_play` with
/// the purchase token (its SHA-256 UNIQUE), and the consume or acknowledge owed to Google is
/// written to the `google_finishes` outbox, so that no delivery is left unfinished at Google.
struct GooglePurchaseDelivery {
    let connection: MariaDBConnection

    /// Google refunds a purchase not acknowledged within this many days.
    static let acknowledgeWithinMs: Int64 = 3 * 24 * 3600 * 1000

    struct Input {
        let deliverable: GooglePurchaseDecision.Deliverable
        let purchase: GooglePurchase
        let request: GoogleVerifyRequest
        /// The order the goods go to; nil: a new order of `userID`.
        let orderID: String?
        let userID: String
        let receiptID: UInt64
    }

    /// The purchase as the answer and the rows show it.
    static func transaction(_ input: Input) -> AppleTransaction {
        AppleTransaction(
            transactionID: input.deliverable.transactionID, productID: input.request.productID,
            quantity: input.deliverable.quantity, purchaseDateMs: input.purchase.completionTimeMilliseconds)
    }

    /// Delivers in a database transaction of its own, run again when it lost to another.
    func deliver(_ input: Input) throws -> TransactionAnswer {
        try connection.transactionRetryingDeadlocks(attempts: ReceiptDelivery.attempts) {
            try deliverInTransaction(input)
        }
    }

    /// Delivers inside the caller's database transaction (a verify's, or a PURCHASED push's).
    /// A row a push held `unclaimed` for this token is claimed: delivered to this order and user.
    func deliverInTransaction(_ input: Input) throws -> TransactionAnswer {
        let transaction = Self.transaction(input)
        let tokenSHA256 = GoogleTransactionID.tokenSHA256(input.request.purchaseToken)
        let stored = try storedTransaction(tokenSHA256: tokenSHA256)
        // The token delivered before under another id (Google gave an order id only later): that row stands.
        if let other = stored, other.transactionID != transaction.transactionID {
            let shownOrderID = other.userID == input.userID ? other.orderID : nil
            let state: TransactionState = other.state == "refunded" ? .refunded : .alreadyDelivered
            return TransactionAnswer(transaction: transaction, state: state, orderID: shownOrderID)
        }
        let now = Timestamp.now()
        let answers = try Delivery(connection: connection).deliverInTransaction(
            DeliveryInput(
                receiptID: input.receiptID, userID: input.userID, orderID: input.orderID,
                environment: input.deliverable.environment, appleAnswer: nil, appleStatus: nil,
                transactions: ReceiptTransactions(inApp: [transaction], latestReceiptInfo: [], namedTransactionID: nil),
                row: .complete))
        guard let answer = answers.first else { throw MariaDBError.unexpectedRowCount("Google delivery", expected: 1, got: 0) }
        if answer.state == .delivered {
            // A claimed unclaimed row is Google's already; its new delivered event is not yet.
            if stored == nil {
                try markGooglePlay(transaction.transactionID, purchaseToken: input.request.purchaseToken, tokenSHA256: tokenSHA256)
            }
            try connection.execute(
                "UPDATE events SET store = 'google_play' WHERE transaction_id = ?", [.text(transaction.transactionID)])
            try owe(input, transactionID: transaction.transactionID, at: now)
        }
        return answer
    }

    /// What is stored for a purchase token, locked until the database transaction ends.
    private func storedTransaction(
        tokenSHA256: String
    ) throws(MariaDBError) -> (transactionID: String, state: String, orderID: String?, userID: String?)? {
        guard let row = try connection.execute(
            "SELECT transaction_id, state, order_id, user_id FROM transactions WHERE purchase_token_sha256 = ? FOR UPDATE",
            [.text(tokenSHA256)]
        ).first, let transactionID = row[0], let state = row[1] else { return nil }
        return (transactionID, state, row[2], row[3])
    }

    /// The row `Delivery` wrote is Google's.
    private func markGooglePlay(_ transactionID: String, purchaseToken: String, tokenSHA256: String) throws(MariaDBError) {
        try connection.execute(
            """
            UPDATE transactions SET store = 'google_play', purchase_token = ?, purchase_token_sha256 = ?
            WHERE transaction_id = ?
            """,
            [.text(purchaseToken), .text(tokenSHA256), .text(transactionID)]
        ).requireRows(1, "UPDATE transactions store google_play")
    }

    /// The consume (a consumable product, `products.type`: consuming also acknowledges) or the
    /// acknowledge (any other type) owed to Google, due at once, before Google's 3 days.
    private func owe(_ input: Input, transactionID: String, at now: Timestamp) throws(MariaDBError) {
        let purchasedMs = input.purchase.completionTimeMilliseconds ?? now.milliseconds
        try connection.execute(
            """
            INSERT INTO google_finishes (transaction_id, action, package_name, created_at, deadline_at, next_attempt_at)
            VALUES (?, ?, ?, ?, ?, ?)
            ON DUPLICATE KEY UPDATE transaction_id = google_finishes.transaction_id
            """,
            [
                .text(transactionID), .text(try finishAction(productID: input.request.productID).rawValue),
                .text(input.request.packageName),
                .text(now.sql), .text(AppleDate.sqlDateTime(ms: purchasedMs + Self.acknowledgeWithinMs)), .text(now.sql),
            ])
    }

    /// Consume unless the catalog says the product is kept (`non_consumable`) or a subscription.
    private func finishAction(productID: String) throws(MariaDBError) -> GoogleFinishAction {
        let type = try connection.execute("SELECT type FROM products WHERE product_id = ?", [.text(productID)])
            .first?[0] ?? nil
        return ProductType(stored: type).isConsumedAtGoogle ? .consume : .acknowledge
    }
}
