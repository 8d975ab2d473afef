/// A chain's state, as a `subscriptions` row holds it (without its user and
/// store, which no change here moves). Dates are milliseconds since 1970 UTC.
public struct SubscriptionState: Equatable, Sendable {
    public var originalTransactionID: String
    /// The product of the latest period.
    public var productID: String
    public var environment: String
    public var status: SubscriptionStatus
    /// The end of the latest period.
    public var expiresAt: Int64
    /// The end of the billing grace period, while the chain is in one.
    public var gracePeriodExpiresAt: Int64?
    /// Whether the chain renews at `expiresAt`; nil until renewal info says.
    public var autoRenews: Bool?
    public var autoRenewProductID: String?
    /// Why it expired; nil unless `status` is `expired`.
    public var expirationIntent: ExpirationIntent?
    public var latestTransactionID: String
    public var latestPurchaseDate: Int64
    /// The date of the last change applied; a change dated before it changes nothing.
    public var lastSignedDate: Int64?

    public init(
        originalTransactionID: String, productID: String, environment: String, status: SubscriptionStatus,
        expiresAt: Int64, gracePeriodExpiresAt: Int64? = nil, autoRenews: Bool? = nil,
        autoRenewProductID: String? = nil, expirationIntent: ExpirationIntent? = nil,
        latestTransactionID: String, latestPurchaseDate: Int64, lastSignedDate: Int64? = nil
    ) {
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.environment = environment
        self.status = status
        self.expiresAt = expiresAt
        self.gracePeriodExpiresAt = gracePeriodExpiresAt
        self.autoRenews = autoRenews
        self.autoRenewProductID = autoRenewProductID
        self.expirationIntent = expirationIntent
        self.latestTransactionID = latestTransactionID
        self.latestPurchaseDate = latestPurchaseDate
        self.lastSignedDate = lastSignedDate
    }

    /// A chain first seen through `period`: active until the period ends (revoked when it is).
    public init(startingWith period: SubscriptionPeriod) {
        self.init(
            originalTransactionID: period.originalTransactionID, productID: period.productID,
            environment: period.environment, status: period.isRevoked ? .revoked : .active,
            expiresAt: period.expiresDate, latestTransactionID: period.transactionID,
            latestPurchaseDate: period.purchaseDate)
    }

    /// Until when the player may use the subscription: the period's end, or the grace period's
    /// when that is later; nil in a status that entitles to nothing.
    public var entitledUntil: Int64? {
        switch status {
        case .active: return expiresAt
        case .gracePeriod: return max(expiresAt, gracePeriodExpiresAt ?? expiresAt)
        case .billingRetry, .expired, .revoked: return nil
        }
    }

    /// Whether the player may use the subscription at `now` (ms since 1970 UTC). Time alone ends
    /// it: a chain past its end is not entitled even before any notification says it expired.
    public func isEntitled(at now: Int64) -> Bool {
        guard let until = entitledUntil else { return false }
        return now < until
    }
}
