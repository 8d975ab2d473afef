import IAPCore
import MariaDB

/// SQL of the `transactions` table and of the orders delivery creates. Callers
/// run these inside one database transaction; exactly-once rests on the
/// primary key of `transactions`: of two requests inserting the same
/// transaction id at once, the second waits for the first to commit and then
/// finds the row there.
struct TransactionStore {
    let connection: MariaDBConnection

    /// What the table already holds for a transaction.
    struct Existing {
        let state: String
        let orderID: String?
        let userID: String
    }

    /// Inserts `transaction` as delivered to `orderID`; false when the row was
    /// already there (delivered or refunded before).
    func insertDelivered(
        _ transaction: AppleTransaction, orderID: String, userID: String, environment: AppleEnvironment,
        receiptID: UInt64, at time: Timestamp
    ) throws(MariaDBError) -> Bool {
        try insert(
            transaction, state: "delivered", orderID: orderID, userID: userID, environment: environment,
            receiptID: receiptID, deliveredAt: time.sql, at: time)
    }

    /// Inserts a refunded transaction never seen before; false when it exists.
    func insertRefunded(
        _ transaction: AppleTransaction, userID: String, environment: AppleEnvironment, receiptID: UInt64,
        at time: Timestamp
    ) throws(MariaDBError) -> Bool {
        try insert(
            transaction, state: "refunded", orderID: nil, userID: userID, environment: environment,
            receiptID: receiptID, deliveredAt: nil, at: time)
    }

    private func insert(
        _ transaction: AppleTransaction, state: String, orderID: String?, userID: String,
        environment: AppleEnvironment, receiptID: UInt64, deliveredAt: String?, at time: Timestamp
    ) throws(MariaDBError) -> Bool {
        // ON DUPLICATE KEY ... no-op rather than INSERT IGNORE, which would also
        // turn real errors (a value too long) into silent warnings.
        let result = try connection.execute(
            """
            INSERT INTO transactions (transaction_id, original_transaction_id, order_id, user_id, product_id,
              quantity, environment, purchase_date, cancellation_date, state, receipt_id, created_at, delivered_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON DUPLICATE KEY UPDATE transaction_id = transaction_id
            """,
            [.text(transaction.transactionID), .text(transaction.originalTransactionID), .optional(orderID),
             .text(userID), .text(transaction.productID), .integer(Int64(transaction.quantity)),
             .text(environment.rawValue), .optional(transaction.purchaseDateMs.map(AppleDate.sqlDateTime)),
             .optional(transaction.cancellationDateMs.map(AppleDate.sqlDateTime)), .text(state),
             .integer(Int64(receiptID)), .text(time.sql), .optional(deliveredAt)])
        return result.affectedRows == 1
    }

    /// The stored row, locked until the database transaction ends.
    func existing(_ transactionID: String) throws(MariaDBError) -> Existing? {
        try read("SELECT state, order_id, user_id FROM transactions WHERE transaction_id = ? FOR UPDATE", transactionID)
    }

    /// The stored row, read without a lock (outside a database transaction).
    func stored(_ transactionID: String) throws(MariaDBError) -> Existing? {
        try read("SELECT state, order_id, user_id FROM transactions WHERE transaction_id = ?", transactionID)
    }

    private func read(_ sql: String, _ transactionID: String) throws(MariaDBError) -> Existing? {
        guard let row = try connection.execute(sql, [.text(transactionID)]).first, let state = row[0],
              let userID = row[2]
        else { return nil }
        return Existing(state: state, orderID: row[1], userID: userID)
    }

    /// Marks a delivered transaction refunded, and its order with it.
    func markRefunded(_ transaction: AppleTransaction, orderID: String?, at time: Timestamp) throws(MariaDBError) {
        try connection.execute(
            "UPDATE transactions SET state = 'refunded', cancellation_date = ? WHERE transaction_id = ?",
            [.optional(transaction.cancellationDateMs.map(AppleDate.sqlDateTime)), .text(transaction.transactionID)])
        if let orderID {
            try connection.execute(
                "UPDATE orders SET status = 'refunded', updated_at = ? WHERE order_id = ?",
                [.text(time.sql), .text(orderID)])
        }
    }

    /// The request's own order, now paid.
    func markOrderDelivered(_ orderID: String, at time: Timestamp) throws(MariaDBError) {
        try connection.execute(
            "UPDATE orders SET status = 'delivered', updated_at = ? WHERE order_id = ? AND status = 'created'",
            [.text(time.sql), .text(orderID)])
    }

    /// An order made on the spot for a paid transaction that had none (origin
    /// `receipt`), at the catalog price when the product is in the catalog.
    func insertReceiptOrder(
        orderID: String, userID: String, productID: String, at time: Timestamp
    ) throws(MariaDBError) {
        try connection.execute(
            """
            INSERT INTO orders (order_id, user_id, product_id, price, currency, status, origin, created_at, updated_at)
            SELECT ?, ?, ?, COALESCE(MAX(price), 0), COALESCE(MAX(currency), 'CNY'), 'delivered', 'receipt', ?, ?
            FROM products WHERE product_id = ?
            """,
            [.text(orderID), .text(userID), .text(productID), .text(time.sql), .text(time.sql), .text(productID)])
    }
}
