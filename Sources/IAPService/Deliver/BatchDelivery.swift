import IAPCore
import MariaDB

/// Step 6 for a batch of Apple's answers inside the caller's database
/// transaction (the `events` rows of its deliveries included), with one
/// statement per table: one row per statement costs the database several
/// times what the rows cost (`BatchPlan`). A verification
/// that cannot go with the others is left out, for `Delivery` one by one.
struct BatchDelivery {
    let connection: MariaDBConnection
    /// The catalog in memory: the price of the orders made on delivery.
    let catalog: [String: SettingsCache.CatalogPrice]

    /// One verification of the batch.
    struct Item {
        /// Apple's answer, to be stored in the receipt's row; nil when the row holds it already.
        let record: AppleAnswerRecord?
        /// The admitted receipt to deliver; nil when there is nothing to deliver.
        let delivery: (member: BatchPlan.Member, environment: AppleEnvironment)?
    }

    /// A row the batch inserts was inserted by another request since it was
    /// read: the caller rolls the batch back, and each goes one by one.
    struct TransactionAlreadyThere: Error {}

    /// Records and delivers the items that may go together. By item: the
    /// transactions it delivered ([] when it delivers none), or nil when it was
    /// left out and nothing of it is written.
    func record(_ items: [Item], at now: Timestamp) throws -> [[TransactionAnswer]?] {
        let transactions = TransactionStore(connection: connection)
        var joined = Array(repeating: true, count: items.count)
        let delivering = items.indices.filter { items[$0].delivery != nil }
        func member(_ index: Int) -> BatchPlan.Member { items[index].delivery!.member }

        let joinable = BatchPlan.joinable(delivering.map(member)) { catalog[$0] != nil }
        for (index, mayJoin) in zip(delivering, joinable) where !mayJoin { joined[index] = false }
        // A subscription's periods move their chain too: `Delivery` does that, one request at a time.
        for index in delivering where ShownPeriods.includesPeriods(member(index).transactions.transactions) {
            joined[index] = false
        }
        let stored = try transactions.existingIDs(
            delivering.filter { joined[$0] }.flatMap { member($0).transactions.transactions.map(\.transactionID) })
        for index in delivering where member(index).transactions.transactions.contains(where: { stored.contains($0.transactionID) }) {
            joined[index] = false
        }

        let members = delivering.filter { joined[$0] }
        let requestOrders = try OrderStore(connection: connection).ordersLockingForUpdate(
            members.compactMap { member($0).orderID })
        let plan = BatchPlan(members: members.map(member), requestOrders: requestOrders, newOrderID: OrderID.make)
        let rows = plan.rows.map { row in
            let (member, environment) = items[members[row.member]].delivery!
            return TransactionStore.NewRow(
                transaction: row.transaction, orderID: row.orderID, userID: member.userID, environment: environment,
                receiptID: member.receiptID)
        }
        guard try transactions.insert(rows, at: now) == rows.count else { throw TransactionAlreadyThere() }
        try EventStore(connection: connection).record(
            zip(plan.rows, rows).map { planned, row in
                EventStore.NewEvent(
                    .delivered, row.transaction, orderID: planned.orderID, userID: row.userID, environment: row.environment)
            },
            at: now)
        try transactions.insertReceiptOrders(
            zip(plan.rows, rows).filter { $0.0.makesOrder }.map { planned, row in
                TransactionStore.ReceiptOrder(
                    orderID: planned.orderID, userID: row.userID, productID: row.transaction.productID,
                    price: catalog[row.transaction.productID]!)
            },
            at: now)
        try transactions.markOrdersDelivered(plan.paidOrderIDs, at: now)
        try ReceiptStore(connection: connection).recordAppleAnswers(
            items.indices.filter { joined[$0] }.compactMap { items[$0].record }, at: now)

        var delivered: [[TransactionAnswer]?] = items.indices.map { joined[$0] ? [] : nil }
        for (position, index) in members.enumerated() {
            delivered[index] = plan.answers[position]
        }
        return delivered
    }
}

extension BatchDelivery.Item {
    /// An admitted verification's delivery, with Apple's answer for its row
    /// unless the row holds it.
    init(delivering input: DeliveryInput) {
        self.init(
            record: input.appleAnswerRecord,
            delivery: (
                BatchPlan.Member(
                    receiptID: input.receiptID, userID: input.userID, orderID: input.orderID,
                    transactions: input.transactions),
                input.environment))
    }
}
