/// One `events` row as the webhook POSTs it, with its transaction and order as
/// they are when it is sent (docs/events.md "Push: the webhook").
public struct WebhookEvent: Equatable, Sendable {
    public struct Transaction: Equatable, Sendable {
        public var transactionID: String
        public var originalTransactionID: String
        public var productID: String
        public var quantity: Int
        public var purchaseDateMs: Int64?
        /// `transactions.state` now (`delivered`, `refunded`, …); nil when the row is gone.
        public var state: String?
        /// Apple's `revocationReason`, `revocationType` and `revocationPercentage` (milliunits of the
        /// price refunded: a `REFUND_PRORATED` of 40000 takes back 40 % of the goods); nil when none.
        public var revocationReason: Int?
        public var revocationType: String?
        public var revocationPercentage: Int?
        /// How many of `quantity` a Google Play quantity-based partial refund took back (this event's
        /// refund: the goods of the rest stay); nil for any other event.
        public var refundedQuantity: Int?

        public init(
            transactionID: String, originalTransactionID: String, productID: String, quantity: Int,
            purchaseDateMs: Int64?, state: String?, revocationReason: Int? = nil, revocationType: String? = nil,
            revocationPercentage: Int? = nil, refundedQuantity: Int? = nil
        ) {
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID
            self.productID = productID
            self.quantity = quantity
            self.purchaseDateMs = purchaseDateMs
            self.state = state
            self.revocationReason = revocationReason
            self.revocationType = revocationType
            self.revocationPercentage = revocationPercentage
            self.refundedQuantity = refundedQuantity
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

    /// What a `refund_requested` event adds: the request the game may answer.
    public struct RefundRequest: Equatable, Sendable {
        /// Apple's `consumptionRequestReason`, or Google's `refundReason`; nil when the store gave none.
        public var reason: String?
        /// When the store stops waiting for the answer (ms since 1970 UTC).
        public var deadlineAtMs: Int64

        public init(reason: String?, deadlineAtMs: Int64) {
            self.reason = reason
            self.deadlineAtMs = deadlineAtMs
        }

        var members: JSONObject {
            ["reason": .optionalString(reason), "deadline_at": .string(AppleDate.iso8601(ms: deadlineAtMs))]
        }
    }

    /// What a `subscription_changed` event adds: the chain's state after the change.
    public struct Subscription: Equatable, Sendable {
        /// `active`, `grace_period`, `billing_retry`, `expired` or `revoked`.
        public var status: String
        /// The chain's expiry after the change (ms since 1970 UTC); nil when the row has none.
        public var expiresAtMs: Int64?
        /// Whether the chain renews at its expiry; nil while the store has not said.
        public var autoRenew: Bool?
        public var originalTransactionID: String

        public init(status: String, expiresAtMs: Int64?, autoRenew: Bool?, originalTransactionID: String) {
            self.status = status
            self.expiresAtMs = expiresAtMs
            self.autoRenew = autoRenew
            self.originalTransactionID = originalTransactionID
        }

        var members: JSONObject {
            [
                "status": .string(status),
                "expires_at": .optionalString(expiresAtMs.map(AppleDate.iso8601(ms:))),
                "auto_renew": autoRenew.map { .bool($0) } ?? .null,
                "original_transaction_id": .string(originalTransactionID),
            ]
        }
    }

    public var eventID: UInt64
    public var type: GameEventType
    /// The store that sold the transaction.
    public var store: PurchaseStore
    public var occurredAtMs: Int64
    /// `Production` or `Sandbox`.
    public var environment: String
    public var transaction: Transaction
    public var order: Order
    /// The `refund_request` member of a `refund_requested` event's body (null when its row is gone); other
    /// events have no such member.
    public var refundRequest: RefundRequest?
    /// The `subscription` member of a `subscription_changed` event's body (null when the row has no
    /// status); other events have no such member.
    public var subscription: Subscription?

    public init(
        eventID: UInt64, type: GameEventType, store: PurchaseStore = .appStore, occurredAtMs: Int64,
        environment: String, transaction: Transaction, order: Order, refundRequest: RefundRequest? = nil,
        subscription: Subscription? = nil
    ) {
        self.eventID = eventID
        self.type = type
        self.store = store
        self.occurredAtMs = occurredAtMs
        self.environment = environment
        self.transaction = transaction
        self.order = order
        self.refundRequest = refundRequest
        self.subscription = subscription
    }

    /// The POST's body, members in the contract's order.
    public func body() -> [UInt8] {
        var members: JSONObject = [
            "event_id": .int(eventID),
            "type": .string(type.rawValue),
            "store": .string(store.rawValue),
            "occurred_at": .string(AppleDate.iso8601(ms: occurredAtMs)),
            "environment": .string(environment),
            "transaction": .object([
                "transaction_id": .string(transaction.transactionID),
                "original_transaction_id": .string(transaction.originalTransactionID),
                "product_id": .string(transaction.productID),
                "quantity": .int(transaction.quantity),
                "purchase_date": .optionalString(transaction.purchaseDateMs.map(AppleDate.iso8601(ms:))),
                "state": .optionalString(transaction.state),
                "revocation_reason": transaction.revocationReason.map { .int($0) } ?? .null,
                "revocation_type": .optionalString(transaction.revocationType),
                "revocation_percentage": transaction.revocationPercentage.map { .int($0) } ?? .null,
                "refunded_quantity": transaction.refundedQuantity.map { .int($0) } ?? .null,
            ]),
            "order": .object([
                "order_id": .string(order.orderID),
                "user_id": .string(order.userID),
                "product_id": .string(order.productID),
                "price": .optionalString(order.price),
                "currency": .optionalString(order.currency),
                "status": .optionalString(order.status),
            ]),
        ]
        switch type {
        case .refundRequested:
            members.members.append((key: "refund_request", value: refundRequest.map { .object($0.members) } ?? .null))
        case .subscriptionChanged:
            members.members.append((key: "subscription", value: subscription.map { .object($0.members) } ?? .null))
        case .delivered, .refunded, .refundReversed:
            break
        }
        return JSONValue.object(members).serialized()
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
