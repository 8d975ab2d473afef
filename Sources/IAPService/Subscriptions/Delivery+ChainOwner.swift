import IAPCore
import MariaDB

/// A subscription's renewal goes to the user of its chain's first delivery,
/// whoever's receipt or JWS shows it: a request of another user (one Apple
/// account signed in to two game accounts) delivers it, once, to that user,
/// and is answered `already_delivered` without that user's order id.
extension Delivery {
    /// The user each chain among `transactions` went to first here, for the chains another user has.
    func chainOwners(of transactions: [AppleTransaction], requestUserID: String) throws(MariaDBError) -> [String: String] {
        let chains = Set(transactions.compactMap { SubscriptionPeriod(transaction: $0, environment: "")?.originalTransactionID })
        var owners: [String: String] = [:]
        let claims = ChainClaim(connection: connection)
        for chainID in chains.sorted() {
            if let owner = try claims.firstOrder(of: chainID)?.userID, owner != requestUserID { owners[chainID] = owner }
        }
        return owners
    }

    /// Delivers `transaction` to `owner` when it was never delivered (a new order, its `delivered` event);
    /// the request is told it was delivered already.
    func deliverToChainOwner(
        _ transaction: AppleTransaction, owner: String, input: DeliveryInput, events: inout [EventStore.NewEvent], at now: Timestamp
    ) throws -> TransactionAnswer {
        let store = TransactionStore(connection: connection)
        let orderID = OrderID.make()
        if try store.insertDelivered(
            transaction, orderID: orderID, userID: owner, environment: input.environment, receiptID: input.receiptID,
            at: now)
            || store.claim(transaction.transactionID, orderID: orderID, userID: owner, receiptID: input.receiptID, at: now)
        {
            try store.insertReceiptOrder(orderID: orderID, userID: owner, productID: transaction.productID, at: now)
            events.append(EventStore.NewEvent(
                .delivered, transaction, orderID: orderID, userID: owner, environment: input.environment))
        }
        let state: TransactionState = try store.existing(transaction.transactionID)?.state == "refunded"
            ? .refunded : .alreadyDelivered
        return TransactionAnswer(transaction: transaction, state: state, orderID: nil)
    }
}
