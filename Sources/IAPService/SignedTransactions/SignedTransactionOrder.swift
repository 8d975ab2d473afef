import IAPCore
import MariaDB

/// docs/api.md "POST /v1/transactions/verify" step 5: whose the goods are. The
/// order the transaction's `appAccountToken` names, when it exists, wins: the
/// app passed our order id to StoreKit when the user paid, and Apple signed it
/// into the transaction, so a request that names another order or another
/// user is refused (409 `order_user_mismatch`) before anything is written.
/// Else the request's `order_id`, else a new order of its `user_id`.
struct SignedTransactionOrder: Sendable {
    /// The order the delivery binds to; nil: a new order of `userID`.
    let orderID: String?
    let userID: String

    /// Reads the orders named, without locks: an order's user never changes,
    /// and `Delivery` locks the order again before it binds to it.
    /// - Throws: `APIError` (`order_user_mismatch`, `unknown_order`,
    ///   `missing_field`), or the database's error.
    static func resolve(
        appAccountToken: String?, request: TransactionVerifyRequest, connection: MariaDBConnection
    ) throws -> SignedTransactionOrder {
        let orders = OrderStore(connection: connection)
        if let token = appAccountToken.flatMap(VerifyRequest.lowercaseUUID), let order = try orders.order(token) {
            if let orderID = request.orderID, orderID != order.orderID { throw APIError.orderUserMismatch }
            if let userID = request.userID, userID != order.userID { throw APIError.orderUserMismatch }
            return SignedTransactionOrder(orderID: order.orderID, userID: order.userID)
        }
        if let orderID = request.orderID {
            guard let order = try orders.order(orderID) else { throw APIError.unknownOrder }
            if let userID = request.userID, userID != order.userID { throw APIError.orderUserMismatch }
            return SignedTransactionOrder(orderID: orderID, userID: order.userID)
        }
        guard let userID = request.userID else {
            throw APIError.missingField(
                "user_id", "is required when neither order_id nor the transaction's appAccountToken names an order")
        }
        return SignedTransactionOrder(orderID: nil, userID: userID)
    }

    /// The order of a transaction fetched for a bare `transaction_id`: only
    /// the one its `appAccountToken` names, and only when the request agrees
    /// (`TransactionIDProof`); read without locks, as `resolve` reads.
    /// - Throws: `APIError` (`proof_required`, `order_user_mismatch`), or the database's error.
    static func proven(
        appAccountToken: String?, request: TransactionVerifyRequest, connection: MariaDBConnection
    ) throws -> SignedTransactionOrder {
        let tokenOrder = try appAccountToken.flatMap(VerifyRequest.lowercaseUUID).flatMap {
            try OrderStore(connection: connection).order($0)
        }
        let order = try TransactionIDProof.verdict(
            tokenOrder: tokenOrder.map { TransactionIDProof.TokenOrder(orderID: $0.orderID, userID: $0.userID) },
            requestOrderID: request.orderID, requestUserID: request.userID
        ).order()
        return SignedTransactionOrder(orderID: order.orderID, userID: order.userID)
    }
}
