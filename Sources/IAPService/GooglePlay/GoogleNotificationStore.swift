import IAPCore
import MariaDB

/// SQL of `google_notifications` and of the Google purchases a notification
/// names. The primary key on `message_id` makes a message Pub/Sub pushes again
/// change nothing: of two requests inserting one id at once, the second waits
/// for the first to commit and then finds the row there.
struct GoogleNotificationStore {
    let connection: MariaDBConnection

    /// Inserts the message with `effect`; false when its id is there already.
    func insert(_ message: GooglePushMessage, effect: GoogleNotificationEffect, at time: Timestamp) throws(MariaDBError) -> Bool {
        let notification = message.notification
        // ON DUPLICATE KEY ... no-op rather than INSERT IGNORE, which would also turn real errors into warnings.
        return try connection.execute(
            """
            INSERT INTO google_notifications (message_id, package_name, kind, purchase_token_sha256, order_id,
              event_time, received_at, effect)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON DUPLICATE KEY UPDATE message_id = message_id
            """,
            [
                .text(message.messageID), .text(String(notification.packageName.prefix(255))), .text(notification.storedKind),
                .optional(Self.purchaseToken(of: notification).map(GoogleTransactionID.tokenSHA256)),
                .optional(Self.orderID(of: notification).map { String($0.prefix(64)) }),
                .text(AppleDate.sqlDateTime(ms: notification.eventTimeMilliseconds)), .text(time.sql),
                .text(effect.rawValue),
            ]
        ).affectedRows == 1
    }

    /// What applying it did, once it is known.
    func recordEffect(of messageID: String, _ effect: GoogleNotificationEffect) throws(MariaDBError) {
        try connection.execute(
            "UPDATE google_notifications SET effect = ? WHERE message_id = ?", [.text(effect.rawValue), .text(messageID)]
        ).requireRows(1, "UPDATE google_notifications effect")
    }

    /// A Google purchase as a refund finds it.
    struct Purchase {
        let transactionID: String
        let originalTransactionID: String
        let productID: String
        let quantity: Int
        /// How many of `quantity` quantity-based partial refunds took back so far.
        let refundedQuantity: Int
        let environment: AppleEnvironment
        let state: StoredTransaction.State
        let orderID: String?
        let userID: String?
    }

    /// The Google purchase of `purchaseToken` (else of Google's `orderID`), locked until the database
    /// transaction ends. Two lookups by unique key rather than one with OR, which could lock every row it scans.
    func lockedPurchase(purchaseToken: String, orderID: String?) throws(MariaDBError) -> Purchase? {
        if let purchase = try lockedPurchase(
            where: "purchase_token_sha256 = ?", .text(GoogleTransactionID.tokenSHA256(purchaseToken)))
        {
            return purchase
        }
        guard let orderID else { return nil }
        return try lockedPurchase(where: "transaction_id = ?", .text(orderID))
    }

    /// The Google purchase of Google's `orderID` (its transaction id), locked until the database transaction ends.
    func lockedPurchase(orderID: String) throws(MariaDBError) -> Purchase? {
        try lockedPurchase(where: "transaction_id = ?", .text(orderID))
    }

    private func lockedPurchase(where condition: String, _ key: SQLValue) throws(MariaDBError) -> Purchase? {
        guard let row = try connection.execute(
            """
            SELECT transaction_id, original_transaction_id, product_id, quantity, environment, state, order_id, user_id,
              refunded_quantity
            FROM transactions WHERE \(condition) AND store = 'google_play' FOR UPDATE
            """,
            [key]
        ).first, let transactionID = row[0], let productID = row[2],
            let state = row[5].flatMap(StoredTransaction.State.init(rawValue:))
        else { return nil }
        return Purchase(
            transactionID: transactionID, originalTransactionID: row[1] ?? transactionID, productID: productID,
            quantity: row[3].flatMap { Int($0) } ?? 1, refundedQuantity: row[8].flatMap { Int($0) } ?? 0,
            environment: row[4].flatMap(AppleEnvironment.init(rawValue:)) ?? .sandbox, state: state,
            orderID: row[6], userID: row[7])
    }

    private static func purchaseToken(of notification: GoogleDeveloperNotification) -> String? {
        switch notification.kind {
        case .oneTimeProductPurchased(let token, _), .oneTimeProductCanceled(let token, _),
            .voidedPurchase(let token, _, _, _):
            return token
        default: return nil
        }
    }

    private static func orderID(of notification: GoogleDeveloperNotification) -> String? {
        switch notification.kind {
        case .voidedPurchase(_, let orderID, _, _): return orderID
        case .pendingRefundReview(_, let orderID, _, _): return orderID
        default: return nil
        }
    }
}
