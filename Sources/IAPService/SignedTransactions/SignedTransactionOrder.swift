import IAPCore
import MariaDB

/// `SignedTransactionOrder` on the database: the orders named are read without
/// locks (an order's user never changes, and `Delivery` locks the order again
/// before it binds to it).
extension SignedTransactionOrder {
    /// - Throws: `APIError` (`order_user_mismatch`, `unknown_order`,
    ///   `missing_field`), or the database's error.
    static func resolve(
        appAccountToken: String?, request: TransactionVerifyRequest, connection: MariaDBConnection
    ) throws -> SignedTransactionOrder {
        try resolve(appAccountToken: appAccountToken, request: request, readOrder: Self.reader(connection))
    }

    /// - Throws: `APIError` (`proof_required`, `order_user_mismatch`), or the database's error.
    static func proven(
        appAccountToken: String?, request: TransactionVerifyRequest, connection: MariaDBConnection
    ) throws -> SignedTransactionOrder {
        try proven(appAccountToken: appAccountToken, request: request, readOrder: Self.reader(connection))
    }

    private static func reader(_ connection: MariaDBConnection) -> (String) throws -> TransactionIDProof.TokenOrder? {
        let orders = OrderStore(connection: connection)
        return { orderID in
            try orders.order(orderID).map { TransactionIDProof.TokenOrder(orderID: $0.orderID, userID: $0.userID) }
        }
    }
}
