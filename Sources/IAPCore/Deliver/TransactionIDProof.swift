/// docs/api.md "POST /v1/transactions/verify": a bare `transaction_id` proves
/// nothing. Transaction ids are sequential and appear in support e-mails, so
/// anyone can name one; only a signed transaction (or a receipt) shows that
/// the request comes from the device that paid. A transaction fetched from
/// Apple for a bare id is therefore delivered only when the `appAccountToken`
/// Apple signed into it names an order of the request's user (or is the
/// request's `order_id`): the app put our order id into StoreKit when its user
/// paid. Anything else is 403 `proof_required`, and nothing changes (an
/// `unclaimed` transaction stays unclaimed).
public enum TransactionIDProof {
    /// The order a transaction's `appAccountToken` names, as stored.
    public struct TokenOrder: Equatable, Sendable {
        public let orderID: String
        public let userID: String

        public init(orderID: String, userID: String) {
            self.orderID = orderID
            self.userID = userID
        }
    }

    public enum Verdict: Equatable, Sendable {
        /// The token names this order, and the request agrees: delivered to it.
        case proven(TokenOrder)
        /// The token names an order the request contradicts (another user's,
        /// or not the `order_id` it names): 409 `order_user_mismatch`.
        case orderUserMismatch
        /// No token, or one that names no order: 403 `proof_required`.
        case proofRequired

        /// The order proven, or the request's error: 409 `order_user_mismatch`
        /// or 403 `proof_required`.
        public func order() throws(APIError) -> TokenOrder {
            switch self {
            case .proven(let order): return order
            case .orderUserMismatch: throw .orderUserMismatch
            case .proofRequired: throw .proofRequired
            }
        }
    }

    /// The verdict for a transaction fetched for a bare id, whose token names
    /// `tokenOrder` (nil: no token, or no such order), asked for by a request
    /// naming `requestOrderID` and `requestUserID`.
    public static func verdict(tokenOrder: TokenOrder?, requestOrderID: String?, requestUserID: String?) -> Verdict {
        guard let tokenOrder else { return .proofRequired }
        if let requestOrderID, requestOrderID != tokenOrder.orderID { return .orderUserMismatch }
        if let requestUserID, requestUserID != tokenOrder.userID { return .orderUserMismatch }
        return .proven(tokenOrder)
    }
}
