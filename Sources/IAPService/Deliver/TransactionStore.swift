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
        /// nil: seen only in a notification (unclaimed, or refunded before any verify).
        let userID: String?
        /// The date of the last refund-state change applied to it (a
        /// notification's or a verify's, `notification_signed_at`), in ms; nil: none.
        let lastChangeMs: Int64?
    }

    /// A transaction row to insert.
    struct NewRow {
        let transaction: AppleTransaction
        /// nil for a refunded transaction never delivered.
        let orderID: String?
        let userID: String
        let environment: AppleEnvironment
        let receiptID: UInt64
        /// A refunded row's refund-state change date (`VerifiedRefund`), in ms.
        var changeDateMs: Int64? = nil

        /// `delivered` when it goes to an order, else `refunded`.
        var state: String { orderID == nil ? "refunded" : "delivered" }
    }

    /// Inserts `transaction` as delivered to `orderID`; false when the row was
    /// already there (delivered or refunded before).
    func insertDelivered(
        _ transaction: AppleTransaction, orderID: String, userID: String, environment: AppleEnvironment,
        receiptID: UInt64, at time: Timestamp
    ) throws(MariaDBError) -> Bool {
        try insert([NewRow(
            transaction: transaction, orderID: orderID, userID: userID, environment: environment, receiptID: receiptID)],
            at: time) == 1
    }

    /// Inserts a refunded transaction never seen before, its refund dated
    /// `changeDate` (`VerifiedRefund`); false when it exists.
    func insertRefunded(
        _ transaction: AppleTransaction, userID: String, environment: AppleEnvironment, receiptID: UInt64,
        changeDate: Int64?, at time: Timestamp
    ) throws(MariaDBError) -> Bool {
        try insert([NewRow(
            transaction: transaction, orderID: nil, userID: userID, environment: environment, receiptID: receiptID,
            changeDateMs: changeDate)],
            at: time) == 1
    }

    /// Inserts the rows, one statement for up to `RowChunks.largest` of them,
    /// and says how many were new; a row already there is left as it is.
    func insert(_ rows: [NewRow], at time: Timestamp) throws(MariaDBError) -> UInt64 {
        var inserted: UInt64 = 0
        var rest = rows[...]
        for size in RowChunks.exact(rows.count) {
            inserted += try insertOnce(rest.prefix(size), at: time)
            rest = rest.dropFirst(size)
        }
        return inserted
    }

    private func insertOnce(_ rows: ArraySlice<NewRow>, at time: Timestamp) throws(MariaDBError) -> UInt64 {
        var parameters: [SQLValue] = []
        parameters.reserveCapacity(rows.count * 14)
        for row in rows {
            let transaction = row.transaction
            parameters += [
                .text(transaction.transactionID), .text(transaction.originalTransactionID), .optional(row.orderID),
                .text(row.userID), .text(transaction.productID), .integer(Int64(transaction.quantity)),
                .text(row.environment.rawValue), .optional(transaction.purchaseDateMs.map(AppleDate.sqlDateTime)),
                .optional(transaction.cancellationDateMs.map(AppleDate.sqlDateTime)), .text(row.state),
                .integer(Int64(row.receiptID)), .text(time.sql), row.orderID == nil ? .null : .text(time.sql),
                .optional(row.changeDateMs.map(AppleDate.sqlDateTime)),
            ]
        }
        // ON DUPLICATE KEY ... no-op rather than INSERT IGNORE, which would also
        // turn real errors (a value too long) into silent warnings. A row left
        // alone counts 0 affected rows, a new one 1.
        return try connection.execute(
            """
            INSERT INTO transactions (transaction_id, original_transaction_id, order_id, user_id, product_id,
              quantity, environment, purchase_date, cancellation_date, state, receipt_id, created_at, delivered_at,
              notification_signed_at)
            VALUES \(SQLPlaceholders.rows(rows.count, columns: 14))
            ON DUPLICATE KEY UPDATE transaction_id = transaction_id
            """,
            parameters
        ).affectedRows
    }

    /// Which of `transactionIDs` the table holds, read without a lock.
    func existingIDs(_ transactionIDs: [String]) throws(MariaDBError) -> Set<String> {
        var existing: Set<String> = []
        for chunk in RowChunks.padded(transactionIDs) {
            let rows = try connection.execute(
                "SELECT transaction_id FROM transactions WHERE transaction_id IN (\(SQLPlaceholders.list(chunk.count)))",
                chunk.map(SQLValue.text)
            ).rows
            existing.formUnion(rows.compactMap { $0[0] })
        }
        return existing
    }

    /// The stored row, locked until the database transaction ends.
    func existing(_ transactionID: String) throws(MariaDBError) -> Existing? {
        try read("\(Self.existingColumns) WHERE transaction_id = ? FOR UPDATE", transactionID)
    }

    /// The stored row, read without a lock (outside a database transaction).
    func stored(_ transactionID: String) throws(MariaDBError) -> Existing? {
        try read("\(Self.existingColumns) WHERE transaction_id = ?", transactionID)
    }

    private static let existingColumns = """
        SELECT state, order_id, user_id, CAST(ROUND(UNIX_TIMESTAMP(notification_signed_at) * 1000) AS SIGNED)
        FROM transactions
        """

    private func read(_ sql: String, _ transactionID: String) throws(MariaDBError) -> Existing? {
        guard let row = try connection.execute(sql, [.text(transactionID)]).first, let state = row[0] else { return nil }
        return Existing(state: state, orderID: row[1], userID: row[2], lastChangeMs: row[3].flatMap { Int64($0) })
    }

    /// Marks a delivered (or unclaimed) transaction refunded, and its order
    /// with it; a `changeDate` becomes its last refund-state change.
    func markRefunded(
        _ transaction: AppleTransaction, orderID: String?, changeDate: Int64?, at time: Timestamp
    ) throws(MariaDBError) {
        try connection.execute(
            """
            UPDATE transactions SET state = 'refunded', cancellation_date = ?,
              notification_signed_at = COALESCE(?, notification_signed_at)
            WHERE transaction_id = ?
            """,
            [.optional(transaction.cancellationDateMs.map(AppleDate.sqlDateTime)),
             .optional(changeDate.map(AppleDate.sqlDateTime)), .text(transaction.transactionID)]
        ).requireRows(1, "UPDATE transactions refunded")
        if let orderID {
            try connection.execute(
                "UPDATE orders SET status = 'refunded', updated_at = ? WHERE order_id = ?",
                [.text(time.sql), .text(orderID)]
            ).requireRows(1, "UPDATE orders refunded")
        }
    }

    /// A refund shown again by a verify, of a transaction refunded already:
    /// nothing changes but its place in the order of refund-state changes.
    func recordRefundStateChange(_ transactionID: String, changeDate: Int64) throws(MariaDBError) {
        try connection.execute(
            "UPDATE transactions SET notification_signed_at = ? WHERE transaction_id = ?",
            [.text(AppleDate.sqlDateTime(ms: changeDate)), .text(transactionID)]
        ).requireRows(1, "UPDATE transactions notification_signed_at")
    }

    /// An unclaimed transaction (paid, seen only in a notification) claimed by
    /// the first verify that shows it: delivered to that request's order and
    /// user. False when the row is not unclaimed (delivered or refunded).
    func claim(
        _ transactionID: String, orderID: String, userID: String, receiptID: UInt64, at time: Timestamp
    ) throws(MariaDBError) -> Bool {
        try connection.execute(
            """
            UPDATE transactions SET state = 'delivered', order_id = ?, user_id = ?, receipt_id = ?, delivered_at = ?
            WHERE transaction_id = ? AND state = 'unclaimed'
            """,
            [.text(orderID), .text(userID), .integer(Int64(receiptID)), .text(time.sql), .text(transactionID)]
        ).affectedRows == 1
    }

    /// The request's own order, now paid.
    func markOrderDelivered(_ orderID: String, at time: Timestamp) throws(MariaDBError) {
        try markOrdersDelivered([orderID], at: time)
    }

    /// Request orders now paid, one statement for up to `RowChunks.largest`.
    /// Each must still be `created` (the caller holds its lock): one that is
    /// not is an error, and the caller's transaction rolls back.
    func markOrdersDelivered(_ orderIDs: [String], at time: Timestamp) throws(MariaDBError) {
        for chunk in RowChunks.padded(orderIDs) {
            try connection.execute(
                """
                UPDATE orders SET status = 'delivered', updated_at = ?
                WHERE order_id IN (\(SQLPlaceholders.list(chunk.count))) AND status = 'created'
                """,
                [.text(time.sql)] + chunk.map(SQLValue.text)
            ).requireRows(Set(chunk).count, "UPDATE orders delivered")
        }
    }

    /// An order made on the spot for a paid transaction that had none (origin
    /// `receipt`, or `notification` for a ONE_TIME_CHARGE), at the catalog price
    /// when the product is in the catalog.
    func insertReceiptOrder(
        orderID: String, userID: String, productID: String, origin: String = "receipt", at time: Timestamp
    ) throws(MariaDBError) {
        try connection.execute(
            """
            INSERT INTO orders (order_id, user_id, product_id, price, currency, status, origin, created_at, updated_at)
            SELECT ?, ?, ?, COALESCE(MAX(price), 0), COALESCE(MAX(currency), 'CNY'), 'delivered', ?, ?, ?
            FROM products WHERE product_id = ?
            """,
            [.text(orderID), .text(userID), .text(productID), .text(origin), .text(time.sql), .text(time.sql),
             .text(productID)]
        ).requireRows(1, "INSERT INTO orders from receipt")
    }

    /// An order made on delivery (origin `receipt`), priced from the catalog in memory.
    struct ReceiptOrder {
        let orderID: String
        let userID: String
        let productID: String
        let price: SettingsCache.CatalogPrice
    }

    /// Orders made on delivery, one statement for up to `RowChunks.largest`.
    func insertReceiptOrders(_ orders: [ReceiptOrder], at time: Timestamp) throws(MariaDBError) {
        var rest = orders[...]
        for size in RowChunks.exact(orders.count) {
            let chunk = rest.prefix(size)
            rest = rest.dropFirst(size)
            let parameters = chunk.flatMap { order -> [SQLValue] in
                [.text(order.orderID), .text(order.userID), .text(order.productID),
                 .text(order.price.price.description), .text(order.price.currency), .text(time.sql), .text(time.sql)]
            }
            try connection.execute(
                """
                INSERT INTO orders (order_id, user_id, product_id, price, currency, created_at, updated_at, status, origin)
                VALUES \(Array(repeating: "(?, ?, ?, ?, ?, ?, ?, 'delivered', 'receipt')", count: size).joined(separator: ", "))
                """,
                parameters
            ).requireRows(size, "INSERT INTO orders on delivery")
        }
    }
}
