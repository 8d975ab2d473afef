import IAPCore
import MariaDB
internal import SignedData

/// Stores a verified notification and applies its effect (the table of effects
/// in docs/api.md, decided by `NotificationChange`) in ONE database
/// transaction, with the `events` rows of what it changes: either all of it is
/// committed, or nothing is and Apple sends it again. The same code serves
/// Apple's POST and `iapctl notifications sync`.
struct NotificationApplier {
    let connection: MariaDBConnection
    let sandboxPolicy: SandboxPolicy
    /// The settings as the caller knows them: `sandbox_users`, and whether they were read at all.
    let settingsAreKnown: Bool
    let sandboxUsers: [String]

    enum Outcome: Equatable {
        /// Its UUID was stored before: nothing changed.
        case duplicate
        case stored(NotificationEffect)
    }

    /// Runs of the database transaction that a deadlock or a lock wait timeout
    /// rolled back, in all, before the error is thrown (Apple then sends it again).
    static let attempts = 3

    func apply(_ verified: VerifiedNotification, source: NotificationStore.Source) throws -> Outcome {
        try connection.transactionRetryingDeadlocks(attempts: Self.attempts) {
            try applyInTransaction(verified, source: source, at: .now())
        }
    }

    private func applyInTransaction(
        _ verified: VerifiedNotification, source: NotificationStore.Source, at now: Timestamp
    ) throws -> Outcome {
        let notifications = NotificationStore(connection: connection)
        guard try notifications.insert(verified, source: source, at: now) else { return .duplicate }
        let notification = verified.notification
        let refundRequests = AppStoreRefundRequestIntake(connection: connection)
        let kind = NotificationKind(notificationType: notification.notificationType, subtype: notification.subtype)
        guard let transaction = verified.transaction, let raw = verified.transactionJSON, kind != .informational
        else {
            try refundRequests.note(verified, at: now)  // CONSUMPTION_REQUEST, REFUND_DECLINED
            return .stored(.stored)
        }

        // The order before the transaction row, as a verify locks them: fewer deadlocks.
        let tokenOrder = try transaction.appAccountToken.flatMap(VerifyRequest.lowercaseUUID).flatMap {
            orderID throws(MariaDBError) in try OrderStore(connection: connection).order(orderID, lockingForUpdate: true)
        }
        let rows = NotifiedTransactionStore(connection: connection)
        let row = try rows.locked(transaction.transactionID)
        let subscription = SubscriptionNotice(connection: connection, verified: verified)
        let order = try subscription.deliveryOrder(tokenOrder: tokenOrder)
        let purchase = NotifiedPurchase(
            productID: transaction.productID, isRevoked: transaction.revocationDate != nil, tokenOrder: order,
            mayDeliver: NotificationAdmission.mayDeliver(
                environment: transaction.environment, policy: sandboxPolicy, settingsAreKnown: settingsAreKnown,
                sandboxUsers: sandboxUsers, userID: order?.userID))
        let change = NotificationChange.decide(
            kind: kind, signedDate: notification.signedDate, stored: row?.stored, purchase: purchase)
        let events = try write(
            change, transaction: transaction, raw: raw, row: row, signedDate: notification.signedDate,
            takesPlace: !subscription.onlyCarriesPeriod, at: now)
        try EventStore(connection: connection).record(events, at: now)
        try subscription.applyToChain(at: now)
        try refundRequests.note(verified, at: now)  // REFUND, REVOKE: the outcome of its refund request
        if change.effect != .stored {
            try notifications.recordEffect(of: notification.notificationUUID, change)
        }
        return .stored(change.effect)
    }

    /// Makes the change; returns the events it owes the game.
    private func write(
        _ change: NotificationChange, transaction: SignedTransaction, raw: JSONObject, row: NotifiedTransactionStore.Row?,
        signedDate: Int64, takesPlace: Bool, at now: Timestamp
    ) throws -> [EventStore.NewEvent] {
        let rows = NotifiedTransactionStore(connection: connection)
        let environment = NotifiedTransactionStore.environment(of: transaction)
        let apple = transaction.appleTransaction(raw: raw)
        switch change {
        case .none(let effect):
            if effect == .unchanged, row != nil, takesPlace {
                try rows.markApplied(transaction.transactionID, signedDate: signedDate)
            }
            return []
        case .deliver(let target):
            let orders = TransactionStore(connection: connection)
            let orderID: String
            let userID: String
            switch target {
            case .order(let tokenOrderID, let owner):
                (orderID, userID) = (tokenOrderID, owner)
                try orders.markOrderDelivered(orderID, at: now)
            case .newOrder(let owner):
                (orderID, userID) = (OrderID.make(), owner)
                try orders.insertReceiptOrder(
                    orderID: orderID, userID: userID, productID: transaction.productID, origin: "notification", at: now)
            }
            if row == nil {
                try rows.insert(transaction, state: .delivered, orderID: orderID, userID: userID, signedDate: signedDate, at: now)
            } else {
                try rows.markDelivered(transaction.transactionID, orderID: orderID, userID: userID, signedDate: signedDate, at: now)
            }
            // No app is in the loop to finish it: the service does (`TransactionFinisher`).
            try FinishOutbox(connection: connection).enqueue(
                transaction.transactionID, signedEnvironment: transaction.environment, at: now)
            return [EventStore.NewEvent(.delivered, apple, orderID: orderID, userID: userID, environment: environment)]
        case .holdUnclaimed:
            if row == nil {
                try rows.insert(transaction, state: .unclaimed, orderID: nil, userID: nil, signedDate: signedDate, at: now)
            } else {
                try rows.markUnclaimed(transaction.transactionID, signedDate: signedDate)
            }
            return []
        case .refund:
            guard let row else {
                try rows.insert(transaction, state: .refunded, orderID: nil, userID: nil, signedDate: signedDate, at: now)
                return []
            }
            let takesBack = row.stored.state == .delivered
            try rows.markRefunded(transaction, orderID: takesBack ? row.orderID : nil, signedDate: signedDate, at: now)
            guard takesBack, let orderID = row.orderID, let userID = row.userID else { return [] }
            return [EventStore.NewEvent(
                .refunded, apple, orderID: orderID, userID: userID, environment: environment,
                occurredAtMs: NotifiedTransactionStore.refundDate(of: transaction, signedDate: signedDate))]
        case .restore:
            guard let row, let orderID = row.orderID, let userID = row.userID else { return [] }
            try rows.restore(transaction.transactionID, orderID: orderID, signedDate: signedDate, at: now)
            return [EventStore.NewEvent(.refundReversed, apple, orderID: orderID, userID: userID, environment: environment)]
        }
    }
}
