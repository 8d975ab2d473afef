import IAPCore
import MariaDB

/// The `subscription_changed` event: a chain's status, expiry and
/// auto-renewal as they are now, for its user, written in the database
/// transaction that changed the chain (docs/events.md). It names the chain's
/// latest period and the order of the latest period delivered to that user.
struct SubscriptionEvent {
    let connection: MariaDBConnection

    func record(_ state: SubscriptionState, userID: String, occurredAtMs: Int64, at now: Timestamp) throws(MariaDBError) {
        guard let row = try connection.execute(
            """
            SELECT order_id FROM transactions
            WHERE original_transaction_id = ? AND user_id = ? AND order_id IS NOT NULL
            ORDER BY purchase_date DESC LIMIT 1
            """,
            [.text(state.originalTransactionID), .text(userID)]
        ).first, let orderID = row[0] else { return }
        try connection.execute(
            """
            INSERT INTO events (type, transaction_id, original_transaction_id, order_id, user_id, product_id, quantity,
              environment, occurred_at, created_at, store, subscription_status, expires_at, auto_renew)
            VALUES ('subscription_changed', ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(state.latestTransactionID), .text(state.originalTransactionID), .text(orderID), .text(userID),
                .text(state.productID), .text(state.environment), .text(AppleDate.sqlDateTime(ms: occurredAtMs)),
                .text(now.sql), .text(PurchaseStore.appStore.rawValue), .text(state.status.rawValue),
                .text(AppleDate.sqlDateTime(ms: state.expiresAt)), state.autoRenews.map { .integer($0 ? 1 : 0) } ?? .null,
            ]
        ).requireRows(1, "INSERT INTO events subscription_changed")
    }
}
