import IAPCore
import MariaDB
internal import SignedData

/// SQL of the `transactions` rows notifications write. Callers run these in
/// the database transaction that stores the notification, after locking the
/// row (`locked`), so that two notifications of one transaction apply one
/// after the other. Every write sets `notification_signed_at`, the
/// `signedDate` an older notification is compared with.
struct NotifiedTransactionStore {
    let connection: MariaDBConnection

    /// The row, locked until the database transaction ends.
    struct Row {
        let stored: StoredTransaction
        let orderID: String?
        let userID: String?
    }

    func locked(_ transactionID: String) throws(MariaDBError) -> Row? {
        guard let row = try connection.execute(
            """
            SELECT state, order_id, user_id, CAST(ROUND(UNIX_TIMESTAMP(notification_signed_at) * 1000) AS SIGNED)
            FROM transactions WHERE transaction_id = ? FOR UPDATE
            """,
            [.text(transactionID)]
        ).first, let stateText = row[0], let state = StoredTransaction.State(rawValue: stateText)
        else { return nil }
        return Row(
            stored: StoredTransaction(
                state: state, wasDelivered: row[1] != nil, lastNotificationSignedDate: row[3].flatMap { Int64($0) }),
            orderID: row[1], userID: row[2])
    }

    /// A transaction never seen before, as the notification leaves it.
    func insert(
        _ transaction: SignedTransaction, state: StoredTransaction.State, orderID: String?, userID: String?,
        signedDate: Int64, at time: Timestamp
    ) throws(MariaDBError) {
        let refunded = state == .refunded
        try connection.execute(
            """
            INSERT INTO transactions (transaction_id, original_transaction_id, order_id, user_id, product_id, quantity,
              environment, purchase_date, cancellation_date, revocation_reason, revocation_type, revocation_percentage,
              state, receipt_id, created_at, delivered_at, notification_signed_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)
            """,
            [
                .text(transaction.transactionID), .text(transaction.originalTransactionID), .optional(orderID),
                .optional(userID), .text(transaction.productID), .integer(Int64(transaction.quantity)),
                .text(Self.environment(of: transaction).rawValue), .text(AppleDate.sqlDateTime(ms: transaction.purchaseDate)),
            ]
                + (refunded ? Self.revocation(of: transaction, signedDate: signedDate) : [.null, .null, .null, .null])
                + [
                    .text(state.rawValue), .text(time.sql), state == .delivered ? .text(time.sql) : .null,
                    .text(AppleDate.sqlDateTime(ms: signedDate)),
                ]
        ).requireRows(1, "INSERT INTO transactions from a notification")
    }

    /// An unclaimed or never-delivered refunded row, delivered now.
    func markDelivered(
        _ transactionID: String, orderID: String, userID: String, signedDate: Int64, at time: Timestamp
    ) throws(MariaDBError) {
        try connection.execute(
            """
            UPDATE transactions SET state = 'delivered', order_id = ?, user_id = ?, delivered_at = ?,
              cancellation_date = NULL, revocation_reason = NULL, revocation_type = NULL, revocation_percentage = NULL,
              notification_signed_at = ?
            WHERE transaction_id = ?
            """,
            [.text(orderID), .text(userID), .text(time.sql), .text(AppleDate.sqlDateTime(ms: signedDate)), .text(transactionID)]
        ).requireRows(1, "UPDATE transactions delivered by a notification")
    }

    /// A refunded row that had been delivered, delivered again (its order too).
    func restore(_ transactionID: String, orderID: String, signedDate: Int64, at time: Timestamp) throws(MariaDBError) {
        try connection.execute(
            """
            UPDATE transactions SET state = 'delivered', cancellation_date = NULL, revocation_reason = NULL,
              revocation_type = NULL, revocation_percentage = NULL, notification_signed_at = ?
            WHERE transaction_id = ?
            """,
            [.text(AppleDate.sqlDateTime(ms: signedDate)), .text(transactionID)]
        ).requireRows(1, "UPDATE transactions refund reversed")
        try setOrderStatus(orderID, "delivered", at: time)
    }

    /// A never-delivered refunded row whose refund was reversed, with no order to go to.
    func markUnclaimed(_ transactionID: String, signedDate: Int64) throws(MariaDBError) {
        try connection.execute(
            """
            UPDATE transactions SET state = 'unclaimed', cancellation_date = NULL, revocation_reason = NULL,
              revocation_type = NULL, revocation_percentage = NULL, notification_signed_at = ?
            WHERE transaction_id = ?
            """,
            [.text(AppleDate.sqlDateTime(ms: signedDate)), .text(transactionID)]
        ).requireRows(1, "UPDATE transactions unclaimed")
    }

    /// Refunded, with Apple's revocation details; its order too when it had one.
    func markRefunded(
        _ transaction: SignedTransaction, orderID: String?, signedDate: Int64, at time: Timestamp
    ) throws(MariaDBError) {
        try markRefunded(
            transaction.transactionID, revocation: Self.revocation(of: transaction, signedDate: signedDate),
            orderID: orderID, signedDate: signedDate, at: time)
    }

    /// Refunded in whole by a store that tells only when (Google Play): no
    /// revocation details; its order too when it had one.
    func markRefunded(
        _ transactionID: String, refundedAtMs: Int64, orderID: String?, at time: Timestamp
    ) throws(MariaDBError) {
        try markRefunded(
            transactionID, revocation: [.text(AppleDate.sqlDateTime(ms: refundedAtMs)), .null, .null, .null],
            orderID: orderID, signedDate: refundedAtMs, at: time)
    }

    /// `revocation`: `cancellation_date`, `revocation_reason`, `revocation_type`, `revocation_percentage`.
    private func markRefunded(
        _ transactionID: String, revocation: [SQLValue], orderID: String?, signedDate: Int64, at time: Timestamp
    ) throws(MariaDBError) {
        try connection.execute(
            """
            UPDATE transactions SET state = 'refunded', cancellation_date = ?, revocation_reason = ?,
              revocation_type = ?, revocation_percentage = ?, notification_signed_at = ?
            WHERE transaction_id = ?
            """,
            revocation + [.text(AppleDate.sqlDateTime(ms: signedDate)), .text(transactionID)]
        ).requireRows(1, "UPDATE transactions refunded by a notification")
        if let orderID { try setOrderStatus(orderID, "refunded", at: time) }
    }

    /// A notification applied with nothing to change still takes its place in the order of `signedDate`.
    func markApplied(_ transactionID: String, signedDate: Int64) throws(MariaDBError) {
        try connection.execute(
            "UPDATE transactions SET notification_signed_at = ? WHERE transaction_id = ?",
            [.text(AppleDate.sqlDateTime(ms: signedDate)), .text(transactionID)]
        ).requireRows(1, "UPDATE transactions notification_signed_at")
    }

    private func setOrderStatus(_ orderID: String, _ status: String, at time: Timestamp) throws(MariaDBError) {
        try connection.execute(
            "UPDATE orders SET status = ?, updated_at = ? WHERE order_id = ?",
            [.text(status), .text(time.sql), .text(orderID)]
        ).requireRows(1, "UPDATE orders \(status)")
    }

    /// Where the row places it (`Xcode`, `LocalTesting`: `Sandbox`).
    static func environment(of transaction: SignedTransaction) -> AppleEnvironment {
        SignedTransactionAdmission.Environment(rawValue: transaction.environment)?.deliveryEnvironment ?? .sandbox
    }

    /// When it was refunded: Apple's `revocationDate`, else the notification's `signedDate`.
    static func refundDate(of transaction: SignedTransaction, signedDate: Int64) -> Int64 {
        transaction.revocationDate ?? signedDate
    }

    /// `cancellation_date`, `revocation_reason`, `revocation_type`, `revocation_percentage`.
    private static func revocation(of transaction: SignedTransaction, signedDate: Int64) -> [SQLValue] {
        [
            .text(AppleDate.sqlDateTime(ms: refundDate(of: transaction, signedDate: signedDate))),
            transaction.revocationReason.map { .integer(Int64($0)) } ?? .null,
            .optional(transaction.revocationType.map { String($0.prefix(32)) }),
            transaction.revocationPercentage.map { .integer(Int64($0)) } ?? .null,
        ]
    }
}
