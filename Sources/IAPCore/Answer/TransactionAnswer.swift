/// One transaction of a verify answer: what Apple said and what the service did.
public struct TransactionAnswer: Equatable, Sendable {
    public let transaction: AppleTransaction
    public let state: TransactionState
    /// The order it was delivered to, nil when it was not delivered.
    public let orderID: String?

    public init(transaction: AppleTransaction, state: TransactionState, orderID: String?) {
        self.transaction = transaction
        self.state = state
        self.orderID = orderID
    }

    /// The entry of the answer's `transactions` array.
    public func json() -> JSONValue {
        .object([
            "transaction_id": .string(transaction.transactionID),
            "original_transaction_id": .string(transaction.originalTransactionID),
            "product_id": .string(transaction.productID),
            "quantity": .int(transaction.quantity),
            "purchase_date": .optionalString(transaction.purchaseDateMs.map(AppleDate.iso8601(ms:))),
            "cancellation_date": .optionalString(transaction.cancellationDateMs.map(AppleDate.iso8601(ms:))),
            "state": .string(state.rawValue),
            "order_id": .optionalString(orderID),
        ])
    }
}
