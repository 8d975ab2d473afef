/// One period of a chain: a transaction of an auto-renewable subscription, from a
/// notification's `signedTransactionInfo`, a JWS or a receipt. Dates are
/// milliseconds since 1970 UTC.
public struct SubscriptionPeriod: Equatable, Sendable {
    public let transactionID: String
    public let originalTransactionID: String
    public let productID: String
    public let purchaseDate: Int64
    /// `expiresDate`: the end of the period (later after a renewal extension).
    public let expiresDate: Int64
    /// `Production` or `Sandbox`.
    public let environment: String
    /// When Apple refunded or revoked it (`revocationDate`, a receipt's `cancellation_date`); nil: it stands.
    public let revocationDate: Int64?

    public init(
        transactionID: String, originalTransactionID: String, productID: String, purchaseDate: Int64,
        expiresDate: Int64, environment: String, revocationDate: Int64? = nil
    ) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.environment = environment
        self.revocationDate = revocationDate
    }

    public var isRevoked: Bool {
        revocationDate != nil
    }
}
