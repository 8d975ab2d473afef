import IAPCore
import MariaDB

/// Step 6 of a verification: every transaction of an admitted receipt, in one
/// database transaction, exactly once across all requests.
struct Delivery {
    let connection: MariaDBConnection

    /// Records Apple's answer and delivers every transaction, inside the
    /// caller's database transaction (`ReceiptDelivery` runs it).
    func deliverInTransaction(_ input: DeliveryInput) throws -> [TransactionAnswer] {
        let now = Timestamp.now()
        let transactions = TransactionStore(connection: connection)
        if let record = input.appleAnswerRecord {
            try ReceiptStore(connection: connection).recordAppleAnswers([record], at: now)
        }
        // Locking the order serialises requests that could both bind to it.
        let order = try input.orderID.flatMap { orderID throws(MariaDBError) in
            try OrderStore(connection: connection).order(orderID, lockingForUpdate: true)
        }
        var binding = OrderBinding(order: order)
        var answers: [TransactionAnswer] = []
        var events: [EventStore.NewEvent] = []
        let chainOwners = try chainOwners(of: input.transactions.transactions, requestUserID: input.userID)
        for shown in input.transactions.transactions {
            var transaction = shown
            if shown.isRefunded {
                if let answer = try refund(shown, input: input, store: transactions, events: &events, at: now) {
                    answers.append(answer)
                    continue
                }
                // A stale refund: the state stored stands, as for a verify that shows no refund.
                transaction = shown.withoutRefund()
            }
            if let owner = chainOwners[transaction.originalTransactionID] {
                answers.append(try deliverToChainOwner(transaction, owner: owner, input: input, events: &events, at: now))
                continue
            }
            let boundOrderID = binding.claim(for: transaction)
            let orderID = boundOrderID ?? OrderID.make()
            // Not inserted: a row unclaimed (paid, seen only in a notification) is
            // this user's, as this verify is the first to show it.
            if try transactions.insertDelivered(
                transaction, orderID: orderID, userID: input.userID, environment: input.environment,
                receiptID: input.receiptID, at: now)
                || transactions.claim(
                    transaction.transactionID, orderID: orderID, userID: input.userID, receiptID: input.receiptID, at: now)
            {
                try payOrder(boundOrderID, orderID: orderID, userID: input.userID, productID: transaction.productID, at: now)
                answers.append(TransactionAnswer(transaction: transaction, state: .delivered, orderID: orderID))
                events.append(EventStore.NewEvent(
                    .delivered, transaction, orderID: orderID, userID: input.userID, environment: input.environment))
            } else {
                if boundOrderID != nil { binding = OrderBinding(order: order) }
                let existing = try transactions.existing(transaction.transactionID)
                let state: TransactionState = existing?.state == "refunded" ? .refunded : .alreadyDelivered
                // Another user's order id is theirs: it is not shown.
                let shownOrderID = existing?.userID == input.userID ? existing?.orderID : nil
                answers.append(TransactionAnswer(transaction: transaction, state: state, orderID: shownOrderID))
            }
        }
        try EventStore(connection: connection).record(events, at: now)
        try ShownPeriods(connection: connection).record(
            input.transactions.transactions, verifyReceiptAnswer: input.appleStatus == nil ? nil : input.appleAnswer,
            environment: input.environment, at: now)
        return answers
    }

    /// The request's order, now paid, or a new order (origin `receipt`) when none was bound.
    private func payOrder(
        _ boundOrderID: String?, orderID: String, userID: String, productID: String, at now: Timestamp
    ) throws(MariaDBError) {
        let transactions = TransactionStore(connection: connection)
        if let boundOrderID {
            try transactions.markOrderDelivered(boundOrderID, at: now)
        } else {
            try transactions.insertReceiptOrder(orderID: orderID, userID: userID, productID: productID, at: now)
        }
    }

    /// A refunded transaction is never delivered; one delivered before is marked
    /// refunded now, with its order, and the game is told to take the goods back.
    /// Refunds take their place by date (`VerifiedRefund`): nil when this one is
    /// older than the last refund-state change of a transaction not refunded
    /// now (a reversal since): nothing is written, and the caller answers it
    /// as stored.
    private func refund(
        _ transaction: AppleTransaction, input: DeliveryInput, store: TransactionStore, events: inout [EventStore.NewEvent],
        at now: Timestamp
    ) throws -> TransactionAnswer? {
        if try store.insertRefunded(
            transaction, userID: input.userID, environment: input.environment, receiptID: input.receiptID,
            changeDate: VerifiedRefund.changeDate(of: transaction), at: now)
        {
            return TransactionAnswer(transaction: transaction, state: .refunded, orderID: nil)
        }
        // Locked from here on.
        guard let existing = try store.existing(transaction.transactionID) else {
            return TransactionAnswer(transaction: transaction, state: .refunded, orderID: nil)
        }
        let shownOrderID = existing.userID == input.userID ? existing.orderID : nil
        let answer = TransactionAnswer(transaction: transaction, state: .refunded, orderID: shownOrderID)
        switch VerifiedRefund.decide(transaction, lastChange: existing.lastChangeMs) {
        case .stale:
            return existing.state == "refunded" ? answer : nil
        case .apply(let changeDate):
            guard existing.state != "refunded" else {
                if let changeDate { try store.recordRefundStateChange(transaction.transactionID, changeDate: changeDate) }
                return answer
            }
            try store.markRefunded(transaction, orderID: existing.orderID, changeDate: changeDate, at: now)
            if existing.state == "delivered", let orderID = existing.orderID, let userID = existing.userID {
                events.append(EventStore.NewEvent(
                    .refunded, transaction, orderID: orderID, userID: userID, environment: input.environment,
                    occurredAtMs: transaction.cancellationDateMs))
            }
            return answer
        }
    }
}
