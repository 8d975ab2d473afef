import IAPCore
import MariaDB

/// The cheap check a bare `transaction_id` must pass before it may take one of the minute's
/// look-ups at Apple (`SignedTransactionFetches`). A fetched transaction is delivered only to the
/// order its `appAccountToken` names (`TransactionIDProof`), and an app that pays makes that order
/// first: so a request whose user has no order waiting for its purchase (status `created`), and
/// for whom the transaction is not stored here either, has nothing a look-up could deliver, and
/// must not spend the look-ups every other player needs (random ids from made-up users did).
struct OpenOrderCheck {
    let connection: MariaDBConnection

    /// Whether the request's `user_id` has an open order, or its `order_id` names one, or the
    /// transaction is stored here for that user or order (asked again after its delivery).
    func admits(transactionID: String, request: TransactionVerifyRequest) throws(MariaDBError) -> Bool {
        let rows = try connection.execute(
            """
            SELECT EXISTS(SELECT 1 FROM orders WHERE user_id = ? AND status = 'created')
              OR EXISTS(SELECT 1 FROM orders WHERE order_id = ? AND status = 'created')
              OR EXISTS(SELECT 1 FROM transactions WHERE transaction_id = ? AND (user_id = ? OR order_id = ?))
            """,
            [
                .optional(request.userID), .optional(request.orderID), .text(transactionID),
                .optional(request.userID), .optional(request.orderID),
            ])
        return rows.first?[0] == "1"
    }
}
