/// docs/api.md "POST /v1/receipts/verify" step 6: which delivered transaction
/// the request's order is for. One order pays for one transaction; the others
/// of the receipt go to new orders of the same user (origin `receipt`).
///
/// Ask it in delivery order (`ReceiptTransactions`, the named transaction
/// first) and only for transactions about to be delivered:
///
/// ```swift
/// var binding = OrderBinding(order: requestOrder)
/// for transaction in receipt.transactions where !transaction.isRefunded {
///     let orderID = binding.claim(for: transaction) ?? createReceiptOrder(...)
/// }
/// ```
public struct OrderBinding: Sendable {
    public let order: RequestOrder?
    /// A transaction of this request already took the order.
    public private(set) var isBound = false

    public init(order: RequestOrder?) {
        self.order = order
    }

    /// Binds `transaction` to the order when it may, and says so with the order id.
    public mutating func claim(for transaction: AppleTransaction) -> String? {
        guard let order, Self.binds(transaction, to: order, alreadyBound: isBound) else { return nil }
        isBound = true
        return order.orderID
    }

    /// Whether `transaction` binds to `order`: the order is still `created`, the
    /// product ids are equal, and no earlier transaction of the same request
    /// took it.
    public static func binds(_ transaction: AppleTransaction, to order: RequestOrder, alreadyBound: Bool) -> Bool {
        order.isOpen && !alreadyBound && transaction.productID == order.productID
    }
}
