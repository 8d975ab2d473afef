import IAPCore
import MariaDB

/// Writes `events` rows. Every caller runs it inside the database transaction
/// that makes the change the event tells of, so the game sees an event exactly
/// when the change is committed: never one without the other.
struct EventStore {
    let connection: MariaDBConnection

    /// One change to the goods of a user.
    struct NewEvent {
        let type: GameEventType
        let transaction: AppleTransaction
        let orderID: String
        let userID: String
        let environment: AppleEnvironment
        /// When it happened; nil: now.
        let occurredAtMs: Int64?
        let store: PurchaseStore
        /// A `refunded` event of a quantity-based partial refund: how many of the quantity it took back.
        let refundedQuantity: Int?

        init(
            _ type: GameEventType, _ transaction: AppleTransaction, orderID: String, userID: String,
            environment: AppleEnvironment, occurredAtMs: Int64? = nil, store: PurchaseStore = .appStore,
            refundedQuantity: Int? = nil
        ) {
            self.type = type
            self.transaction = transaction
            self.orderID = orderID
            self.userID = userID
            self.environment = environment
            self.occurredAtMs = occurredAtMs
            self.store = store
            self.refundedQuantity = refundedQuantity
        }
    }

    /// Inserts the events in the given order (a user's events are sent in the
    /// order of their ids), one statement for up to `RowChunks.largest`.
    func record(_ events: [NewEvent], at time: Timestamp) throws(MariaDBError) {
        var rest = events[...]
        for size in RowChunks.exact(events.count) {
            try insert(rest.prefix(size), at: time)
            rest = rest.dropFirst(size)
        }
    }

    /// Inserts one event; returns its `event_id` (a refund request keeps it, to know when the game was told).
    func recordOne(_ event: NewEvent, at time: Timestamp) throws(MariaDBError) -> UInt64 {
        try insert([event][...], at: time)
    }

    /// Returns the first row's `event_id`.
    @discardableResult
    private func insert(_ events: ArraySlice<NewEvent>, at time: Timestamp) throws(MariaDBError) -> UInt64 {
        var parameters: [SQLValue] = []
        parameters.reserveCapacity(events.count * 12)
        for event in events {
            let transaction = event.transaction
            parameters += [
                .text(event.type.rawValue), .text(transaction.transactionID),
                .text(transaction.originalTransactionID), .text(event.orderID), .text(event.userID),
                .text(transaction.productID), .integer(Int64(transaction.quantity)), .text(event.environment.rawValue),
                .text(event.occurredAtMs.map(AppleDate.sqlDateTime) ?? time.sql), .text(time.sql),
                .text(event.store.rawValue), event.refundedQuantity.map { .integer(Int64($0)) } ?? .null,
            ]
        }
        let inserted = try connection.execute(
            """
            INSERT INTO events (type, transaction_id, original_transaction_id, order_id, user_id, product_id,
              quantity, environment, occurred_at, created_at, store, refunded_quantity)
            VALUES \(SQLPlaceholders.rows(events.count, columns: 12))
            """,
            parameters)
        try inserted.requireRows(events.count, "INSERT INTO events")
        return inserted.insertID
    }
}
