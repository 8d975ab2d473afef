/// One `events` row as the webhook POSTs it, with its transaction and order as
/// they are when it is sent (API.md "Events for the game").
public struct WebhookEvent: Equatable, Sendable {
    public struct Transaction: Equatable, Sendable {
        public var transactionID: String
        public var originalTransactionID: String
        public var productID: String
        public var quantity: Int
        public var purchaseDateMs: Int64?
        /// `transactions.state` now (`delivered`, `refunded`, …); nil when the row is gone.
        public var state: String?

        public init(
            transactionID: String, originalTransactionID: String, productID: String, quantity: Int,
            purchaseDateMs: Int64?, state: String?
        ) {
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID
            self.productID = productID
            self.quantity = quantity
            self.purchaseDateMs = purchaseDateMs
            self.state = state
        }
    }

    public struct Order: Equatable, Sendable {
        public var orderID: String
        public var userID: String
        public var productID: String
        /// `orders.price` as stored, e.g. `6.00`; nil when the row is gone.
        public var price: String?
        public var currency: String?
        public var status: String?

        public init(
            orderID: String, userID: String, productID: String, price: String?, currency: String?, status: String?
        ) {
            self.orderID = orderID
            self.userID = userID
            self.productID = productID
            self.price = price
            self.currency = currency
            self.status = status
        }
    }

    public var eventID: UInt64
    public var type: GameEventType
    public var occurredAtMs: Int64
    /// `Production` or `Sandbox`.
    public var environment: String
    public var transaction: Transaction
    public var order: Order

    public init(
        eventID: UInt64, type: GameEventType, occurredAtMs: Int64, environment: String, transaction: Transaction,
        order: Order
    ) {
        self.eventID = eventID
        self.type = type
        self.occurredAtMs = occurredAtMs
        self.environment = environment
        self.transaction = transaction
        self.order = order
    }

    /// The POST's body, members in the contract's order.
    public func body() -> [UInt8] {
        JSONValue.object([
            "event_id": .int(eventID),
            "type": .string(type.rawValue),
            "occurred_at": .string(AppleDate.iso8601(ms: occurredAtMs)),
            "environment": .string(environment),
            "transaction": .object([
                "transaction_id": .string(transaction.transactionID),
                "original_transaction_id": .string(transaction.originalTransactionID),
                "product_id": .string(transaction.productID),
                "quantity": .int(transaction.quantity),
                "purchase_date": .optionalString(transaction.purchaseDateMs.map(AppleDate.iso8601(ms:))),
                "state": .optionalString(transaction.state),
            ]),
            "order": .object([
                "order_id": .string(order.orderID),
                "user_id": .string(order.userID),
                "product_id": .string(order.productID),
                "price": .optionalString(order.price),
                "currency": .optionalString(order.currency),
                "status": .optionalString(order.status),
            ]),
        ]).serialized()
    }

    /// The headers of its POST besides `Content-Type`, signed at `unixSeconds`.
    public func headers(body: [UInt8], secret: String, unixSeconds: Int64) -> [String] {
        [
            "X-IAP-Event-Id: \(eventID)",
            "\(WebhookSignature.headerName): "
                + WebhookSignature.header(body: body, secret: secret, unixSeconds: unixSeconds),
        ]
    }
}
