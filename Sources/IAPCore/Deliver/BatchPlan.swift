/// docs/api.md "POST /v1/receipts/verify" step 6 for several admitted
/// verifications at once, decided without I/O. The delivery threads record a
/// batch of Apple's answers in one database transaction with one statement per
/// table; a statement per row costs the database several times more than the
/// row itself.
///
/// Only verifications whose every transaction is new and plain can go
/// together; the others are delivered one by one (`Delivery`), which handles
/// every case. A member may join when (`joinable`):
/// - none of its transactions is refunded: a refund may change rows already there;
/// - every product is in the catalog: an order made on delivery takes its price;
/// - it shares no transaction and no request order with an earlier member:
///   the first delivers it, and the other must then see that it did;
/// and, read from the database inside the transaction, none of its
/// transactions is there already.
public struct BatchPlan: Sendable {
    /// One admitted verification.
    public struct Member: Sendable {
        public let receiptID: UInt64
        public let userID: String
        /// The request's order, if it named one.
        public let orderID: String?
        public let transactions: ReceiptTransactions

        public init(receiptID: UInt64, userID: String, orderID: String?, transactions: ReceiptTransactions) {
            self.receiptID = receiptID
            self.userID = userID
            self.orderID = orderID
            self.transactions = transactions
        }
    }

    /// A transaction to insert as delivered.
    public struct Row: Equatable, Sendable {
        /// Index of its member.
        public let member: Int
        public let transaction: AppleTransaction
        public let orderID: String
        /// True: `orderID` is a new order (origin `receipt`); false: it is the
        /// request's own order, now paid.
        public let makesOrder: Bool
    }

    /// Every delivered transaction of every member, in delivery order.
    public let rows: [Row]
    /// Each member's transaction answers, in delivery order.
    public let answers: [[TransactionAnswer]]

    /// Binds each member's transactions as `OrderBinding` does, with
    /// `requestOrders` as read (and locked) in the database transaction; a
    /// transaction that binds to none gets `newOrderID()`.
    public init(members: [Member], requestOrders: [String: RequestOrder], newOrderID: () -> String) {
        var rows: [Row] = []
        var answers: [[TransactionAnswer]] = []
        for (index, member) in members.enumerated() {
            var binding = OrderBinding(order: member.orderID.flatMap { requestOrders[$0] })
            var memberAnswers: [TransactionAnswer] = []
            for transaction in member.transactions.transactions {
                let boundOrderID = binding.claim(for: transaction)
                let orderID = boundOrderID ?? newOrderID()
                rows.append(Row(member: index, transaction: transaction, orderID: orderID, makesOrder: boundOrderID == nil))
                memberAnswers.append(TransactionAnswer(transaction: transaction, state: .delivered, orderID: orderID))
            }
            answers.append(memberAnswers)
        }
        self.rows = rows
        self.answers = answers
    }

    /// Request orders now paid.
    public var paidOrderIDs: [String] {
        rows.filter { !$0.makesOrder }.map(\.orderID)
    }

    /// Which members may go together before the database is read (the rules
    /// above but the last); the first of two that share a transaction or an
    /// order may, the second may not.
    public static func joinable(_ members: [Member], inCatalog: (String) -> Bool) -> [Bool] {
        var transactionIDs: Set<String> = []
        var orderIDs: Set<String> = []
        return members.map { member in
            let transactions = member.transactions.transactions
            guard transactions.allSatisfy({ !$0.isRefunded && inCatalog($0.productID) }),
                  transactions.allSatisfy({ !transactionIDs.contains($0.transactionID) }),
                  member.orderID.map({ !orderIDs.contains($0) }) ?? true
            else { return false }
            transactionIDs.formUnion(transactions.map(\.transactionID))
            if let orderID = member.orderID { orderIDs.insert(orderID) }
            return true
        }
    }
}
