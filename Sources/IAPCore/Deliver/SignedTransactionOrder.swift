/// Whose the goods of a signed transaction are. The order the transaction's
/// `appAccountToken` names, when it exists, wins: the app passed our order id
/// to StoreKit when the user paid, and Apple signed it into the transaction,
/// so a request that names another order or another user is refused (409
/// `order_user_mismatch`) before anything is written. Else the request's
/// `order_id`, else a new order of its `user_id`.
public struct SignedTransactionOrder: Equatable, Sendable {
    /// The order the delivery binds to; nil: a new order of `userID`.
    public let orderID: String?
    public let userID: String

    public init(orderID: String?, userID: String) {
        self.orderID = orderID
        self.userID = userID
    }

    /// The order of a transaction the request sent signed.
    /// - Parameter readOrder: the stored order of an id, nil when there is none.
    /// - Throws: `APIError` (`order_user_mismatch`, `unknown_order`,
    ///   `missing_field`), or what `readOrder` throws.
    public static func resolve(
        appAccountToken: String?, request: TransactionVerifyRequest,
        readOrder: (String) throws -> TransactionIDProof.TokenOrder?
    ) throws -> SignedTransactionOrder {
        if let token = appAccountToken.flatMap(VerifyRequest.lowercaseUUID), let order = try readOrder(token) {
            if let orderID = request.orderID, orderID != order.orderID { throw APIError.orderUserMismatch }
            if let userID = request.userID, userID != order.userID { throw APIError.orderUserMismatch }
            return SignedTransactionOrder(orderID: order.orderID, userID: order.userID)
        }
        if let orderID = request.orderID {
            guard let order = try readOrder(orderID) else { throw APIError.unknownOrder }
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
    /// (`TransactionIDProof`).
    /// - Throws: `APIError` (`proof_required`, `order_user_mismatch`), or what `readOrder` throws.
    public static func proven(
        appAccountToken: String?, request: TransactionVerifyRequest,
        readOrder: (String) throws -> TransactionIDProof.TokenOrder?
    ) throws -> SignedTransactionOrder {
        let tokenOrder = try appAccountToken.flatMap(VerifyRequest.lowercaseUUID).flatMap(readOrder)
        let order = try TransactionIDProof.verdict(
            tokenOrder: tokenOrder, requestOrderID: request.orderID, requestUserID: request.userID
        ).order()
        return SignedTransactionOrder(orderID: order.orderID, userID: order.userID)
    }
}
