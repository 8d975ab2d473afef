/// The order a Google purchase goes to. The app passes our order id to
/// `setObfuscatedAccountId` when it launches the billing flow, and Google
/// returns it as `obfuscatedExternalAccountId`, signed into nothing but read
/// from Google by the service: it is Google's counterpart of Apple's
/// `appAccountToken`. When present it must name an order of the request's user
/// (or be the request's `order_id`), and that order gets the goods; anything
/// else is 409 `order_user_mismatch`, nothing changed. Without it, the
/// request's `order_id` gets them, else a new order of the request's user.
public enum GoogleAccountProof {
    public enum Verdict: Equatable, Sendable {
        /// Deliver to this existing order (the account id's, or the request's).
        case order(String)
        /// No order named anywhere: a new order of the request's user.
        case newOrder
        /// The account id names another user's order, no order, or not the
        /// request's `order_id`: 409 `order_user_mismatch`.
        case orderUserMismatch
    }

    /// The order `obfuscatedExternalAccountId` names, as stored (looked up by
    /// the caller when the account id is a UUID).
    public typealias AccountOrder = TransactionIDProof.TokenOrder

    /// The order id an account id can name: a UUID, lowercased as orders are
    /// stored; nil when the account id cannot be one of our orders.
    public static func orderID(named accountID: String) -> String? {
        VerifyRequest.lowercaseUUID(accountID)
    }

    /// - Parameters:
    ///   - accountID: the purchase's `obfuscatedExternalAccountId` (nil: none).
    ///   - accountOrder: the stored order `orderID(named: accountID)` names; nil
    ///     when there is none (or the account id is no UUID).
    public static func verdict(
        accountID: String?, accountOrder: AccountOrder?, requestOrderID: String?, requestUserID: String?
    ) -> Verdict {
        guard let accountID else {
            return requestOrderID.map(Verdict.order) ?? .newOrder
        }
        let named = orderID(named: accountID)
        if let named, named == requestOrderID { return .order(named) }
        switch TransactionIDProof.verdict(
            tokenOrder: accountOrder, requestOrderID: requestOrderID, requestUserID: requestUserID)
        {
        case .proven(let order): return .order(order.orderID)
        case .orderUserMismatch, .proofRequired: return .orderUserMismatch
        }
    }
}
