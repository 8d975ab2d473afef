import IAPCore
import MariaDB

/// An unclaimed chain (no period of it delivered here yet) takes the user of
/// its first period delivered here: every renewal goes to that user. The
/// renewals that arrived while nobody had it (notifications, held
/// `unclaimed`) are delivered to that user then, each with its `delivered`
/// event, as a notification would have delivered them.
struct ChainClaim {
    let connection: MariaDBConnection

    /// Claims the chain (its `subscriptions` row locked by the caller) when a period of it was
    /// delivered to someone; returns that user, nil when the chain stays unclaimed.
    func claim(_ originalTransactionID: String, at now: Timestamp) throws -> String? {
        guard let userID = try firstOrder(of: originalTransactionID)?.userID else { return nil }
        try connection.execute(
            "UPDATE subscriptions SET user_id = ?, updated_at = ? WHERE original_transaction_id = ? AND user_id IS NULL",
            [.text(userID), .text(now.sql), .text(originalTransactionID)]
        ).requireRows(1, "UPDATE subscriptions claimed")
        try deliverUnclaimedPeriods(of: originalTransactionID, to: userID, at: now)
        return userID
    }

    private func deliverUnclaimedPeriods(of originalTransactionID: String, to userID: String, at now: Timestamp) throws {
        let periods = try connection.execute(
            """
            SELECT transaction_id, product_id, quantity, environment FROM transactions
            WHERE original_transaction_id = ? AND state = 'unclaimed' ORDER BY purchase_date FOR UPDATE
            """,
            [.text(originalTransactionID)]
        ).rows
        var events: [EventStore.NewEvent] = []
        for period in periods {
            guard let transactionID = period[0], let productID = period[1], let environmentText = period[3] else { continue }
            let orderID = OrderID.make()
            try TransactionStore(connection: connection).insertReceiptOrder(
                orderID: orderID, userID: userID, productID: productID, origin: "notification", at: now)
            try connection.execute(
                """
                UPDATE transactions SET state = 'delivered', order_id = ?, user_id = ?, delivered_at = ?
                WHERE transaction_id = ? AND state = 'unclaimed'
                """,
                [.text(orderID), .text(userID), .text(now.sql), .text(transactionID)]
            ).requireRows(1, "UPDATE transactions unclaimed period delivered")
            // No app is in the loop to finish it: the service does (`TransactionFinisher`).
            try FinishOutbox(connection: connection).enqueue(transactionID, signedEnvironment: environmentText, at: now)
            let transaction = AppleTransaction(
                transactionID: transactionID, originalTransactionID: originalTransactionID, productID: productID,
                quantity: period[2].flatMap { Int($0) } ?? 1)
            events.append(EventStore.NewEvent(
                .delivered, transaction, orderID: orderID, userID: userID,
                environment: AppleEnvironment(rawValue: environmentText) ?? .sandbox))
        }
        try EventStore(connection: connection).record(events, at: now)
    }
}

extension ChainClaim {
    /// The order of the chain's first period delivered here (whose user every renewal goes to); nil
    /// while none was. The caller holds the chain's `subscriptions` row lock (or the gap where it goes).
    func firstOrder(of originalTransactionID: String) throws(MariaDBError) -> RequestOrder? {
        guard let row = try connection.execute(
            """
            SELECT o.order_id, o.user_id, o.product_id, o.status
            FROM transactions t JOIN orders o ON o.order_id = t.order_id
            WHERE t.original_transaction_id = ? AND t.user_id IS NOT NULL
            ORDER BY t.delivered_at, t.purchase_date LIMIT 1
            """,
            [.text(originalTransactionID)]
        ).first, let orderID = row[0], let userID = row[1], let productID = row[2], let status = row[3]
        else { return nil }
        return RequestOrder(orderID: orderID, userID: userID, productID: productID, status: status)
    }
}
