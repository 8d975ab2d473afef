import IAPCore
import MariaDB

/// SQL of the `products` and `orders` tables.
struct OrderStore {
    let connection: MariaDBConnection

    /// The catalog price and currency of an active product.
    func activeProduct(_ productID: String) throws(MariaDBError) -> (price: Price, currency: String)? {
        let row = try connection.execute(
            "SELECT price, currency FROM products WHERE product_id = ? AND active = 1", [.text(productID)]
        ).first
        guard let row, let priceText = row[0], let price = Price(priceText), let currency = row[1] else { return nil }
        return (price, currency)
    }

    func insertClientOrder(
        orderID: String, userID: String, productID: String, price: Price, currency: String, at time: Timestamp
    ) throws(MariaDBError) {
        try connection.execute(
            """
            INSERT INTO orders (order_id, user_id, product_id, price, currency, status, origin, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, 'created', 'client', ?, ?)
            """,
            [.text(orderID), .text(userID), .text(productID), .text(price.description), .text(currency),
             .text(time.sql), .text(time.sql)]
        ).requireRows(1, "INSERT INTO orders")
    }

    /// The order a verify request names, with what binding needs.
    func order(_ orderID: String, lockingForUpdate: Bool = false) throws(MariaDBError) -> RequestOrder? {
        let sql = lockingForUpdate
            ? "SELECT user_id, product_id, status FROM orders WHERE order_id = ? FOR UPDATE"
            : "SELECT user_id, product_id, status FROM orders WHERE order_id = ?"
        guard let row = try connection.execute(sql, [.text(orderID)]).first,
              let userID = row[0], let productID = row[1], let status = row[2]
        else { return nil }
        return RequestOrder(orderID: orderID, userID: userID, productID: productID, status: status)
    }

    /// Whose an order is (`SignedTransactionOrder`'s `readOrder`), read without locks: an
    /// order's user never changes, and `Delivery` locks the order again before it binds to it.
    func owner(_ orderID: String) throws(MariaDBError) -> TransactionIDProof.TokenOrder? {
        try order(orderID).map { TransactionIDProof.TokenOrder(orderID: $0.orderID, userID: $0.userID) }
    }

    /// The orders that verifications of one batch name, locked until the
    /// database transaction ends, by id.
    func ordersLockingForUpdate(_ orderIDs: [String]) throws(MariaDBError) -> [String: RequestOrder] {
        var orders: [String: RequestOrder] = [:]
        for chunk in RowChunks.padded(orderIDs) {
            let rows = try connection.execute(
                """
                SELECT order_id, user_id, product_id, status FROM orders
                WHERE order_id IN (\(SQLPlaceholders.list(chunk.count))) FOR UPDATE
                """,
                chunk.map(SQLValue.text)
            ).rows
            for row in rows {
                guard let orderID = row[0], let userID = row[1], let productID = row[2], let status = row[3] else { continue }
                orders[orderID] = RequestOrder(orderID: orderID, userID: userID, productID: productID, status: status)
            }
        }
        return orders
    }
}
