import Crypto

/// The `transactions.transaction_id` of a Google Play purchase: Google's
/// `orderId` (`GPA.1234-5678-9012-34567`, what refunds and reviews name), or,
/// for a purchase Google gives none (some promotional and test purchases),
/// `GP-` and the first 32 hex digits of the purchase token's SHA-256. Either
/// way it cannot collide with an Apple transaction id (decimal digits).
public enum GoogleTransactionID {
    public static let tokenPrefix = "GP-"

    /// The id of the purchase whose token is `purchaseToken` and whose order id
    /// Google gave as `orderID` (nil or empty: none).
    public static func of(orderID: String?, purchaseToken: String) -> String {
        if let orderID, !orderID.isEmpty { return orderID }
        return tokenPrefix + tokenSHA256(purchaseToken).prefix(32)
    }

    /// The purchase token's SHA-256 as 64 lowercase hex digits: the UNIQUE key
    /// that makes one purchase one row, and what logs and audit rows show in
    /// place of the token.
    public static func tokenSHA256(_ purchaseToken: String) -> String {
        SHA256.hexDigest(purchaseToken.utf8)
    }
}
