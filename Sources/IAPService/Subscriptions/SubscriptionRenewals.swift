import IAPCore
import MariaDB
internal import SignedData

/// A period Apple's status look-up shows (Get All Subscription Statuses) that
/// this database has never stored: a renewal nobody told the service of. It
/// is delivered as a notification's is, once, to the user of its chain's
/// first delivery, or held `unclaimed` while the chain has none.
struct SubscriptionRenewals {
    let connection: MariaDBConnection

    /// In the caller's database transaction, before the chain's change is applied; true when it delivered.
    /// A period stored already is left as it is; a revoked one is stored refunded, so that nothing
    /// delivers it later. Its `signedDate` (when Apple answered) is its place among refund changes.
    func deliver(_ transaction: SignedTransaction, raw: JSONObject, at now: Timestamp) throws -> Bool {
        let rows = NotifiedTransactionStore(connection: connection)
        guard try rows.locked(transaction.transactionID) == nil else { return false }
        _ = try SubscriptionStore(connection: connection).locked(transaction.originalTransactionID)
        let signedDate = transaction.signedDate
        if transaction.revocationDate != nil {
            try rows.insert(transaction, state: .refunded, orderID: nil, userID: nil, signedDate: signedDate, at: now)
            return false
        }
        guard let owner = try ChainClaim(connection: connection).firstOrder(of: transaction.originalTransactionID)?.userID
        else {
            try rows.insert(transaction, state: .unclaimed, orderID: nil, userID: nil, signedDate: signedDate, at: now)
            return false
        }
        let orderID = OrderID.make()
        try TransactionStore(connection: connection).insertReceiptOrder(
            orderID: orderID, userID: owner, productID: transaction.productID, origin: "notification", at: now)
        try rows.insert(transaction, state: .delivered, orderID: orderID, userID: owner, signedDate: signedDate, at: now)
        // No app is in the loop to finish it: the service does (`TransactionFinisher`).
        try FinishOutbox(connection: connection).enqueue(
            transaction.transactionID, signedEnvironment: transaction.environment, at: now)
        try EventStore(connection: connection).record(
            [EventStore.NewEvent(
                .delivered, transaction.appleTransaction(raw: raw), orderID: orderID, userID: owner,
                environment: NotifiedTransactionStore.environment(of: transaction))],
            at: now)
        return true
    }
}
