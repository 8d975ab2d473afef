/// Why a chain expired, in the words of the `EXPIRED` notification's subtypes
/// (`subscriptions.expiration_intent`). A subtype Apple adds later is kept as
/// it is written.
public struct ExpirationIntent: RawRepresentable, Equatable, Sendable {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The player turned auto-renewal off.
    public static let voluntary = ExpirationIntent(rawValue: "VOLUNTARY")
    /// Billing retry ended without a successful renewal.
    public static let billingRetry = ExpirationIntent(rawValue: "BILLING_RETRY")
    /// The player did not consent to a price increase.
    public static let priceIncrease = ExpirationIntent(rawValue: "PRICE_INCREASE")
    /// The product was not for sale when it was due to renew.
    public static let productNotForSale = ExpirationIntent(rawValue: "PRODUCT_NOT_FOR_SALE")
    /// Any other reason (the renewal info's "unknown").
    public static let other = ExpirationIntent(rawValue: "OTHER")

    /// The renewal info's `expirationIntent` number: 1 the player cancelled, 2 a billing error,
    /// 3 no consent to a price increase, 4 the product not available, anything else another reason.
    public init(renewalInfoCode: Int) {
        switch renewalInfoCode {
        case 1: self = .voluntary
        case 2: self = .billingRetry
        case 3: self = .priceIncrease
        case 4: self = .productNotForSale
        default: self = .other
        }
    }
}
