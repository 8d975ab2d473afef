/// A chain's renewal info as Apple signed it (the payload of `signedRenewalInfo`,
/// JWSRenewalInfoDecodedPayload), once its signature is checked: what the chain's
/// state takes from it. Dates are milliseconds since 1970 UTC, as Apple writes
/// them. Fields it does not name stay in the stored JWS; none is refused.
public struct RenewalInfo: Equatable, Sendable {
    public let originalTransactionID: String
    /// The product of the current period.
    public let productID: String?
    /// The product the next period will be (differs from `productID` after a downgrade or crossgrade).
    public let autoRenewProductID: String?
    /// `autoRenewStatus` 1: the chain renews at the end of its period; 0: the player turned renewal off.
    public let autoRenews: Bool?
    /// Why the chain expired, when it did.
    public let expirationIntent: ExpirationIntent?
    /// The end of the billing grace period, while the chain is in one.
    public let gracePeriodExpiresDate: Int64?
    /// Apple is still trying to charge for the renewal.
    public let isInBillingRetryPeriod: Bool?
    /// When the next period begins (the current one's expiry).
    public let renewalDate: Int64?
    /// Milliseconds since 1970 UTC: when Apple signed it.
    public let signedDate: Int64
    /// `Production`, `Sandbox`, `Xcode` or `LocalTesting`.
    public let environment: String

    /// Why a verified payload is still not renewal info the service can take.
    public struct DecodingError: Error, Equatable, Sendable {
        public let field: String
    }

    /// Reads the fields from the verified payload's JSON object; null reads as absent.
    public init(json: JSONObject) throws(DecodingError) {
        originalTransactionID = try Self.requiredText(json, "originalTransactionId")
        productID = try Self.text(json, "productId")
        autoRenewProductID = try Self.text(json, "autoRenewProductId")
        autoRenews = try Self.integer(json, "autoRenewStatus").map { $0 == 1 }
        expirationIntent = try Self.integer(json, "expirationIntent").map {
            ExpirationIntent(renewalInfoCode: Int(clamping: $0))
        }
        gracePeriodExpiresDate = try Self.integer(json, "gracePeriodExpiresDate")
        isInBillingRetryPeriod = try Self.flag(json, "isInBillingRetryPeriod")
        renewalDate = try Self.integer(json, "renewalDate")
        guard let signed = try Self.integer(json, "signedDate") else { throw DecodingError(field: "signedDate") }
        signedDate = signed
        environment = try Self.requiredText(json, "environment")
    }

    private static func present(_ object: JSONObject, _ key: String) -> JSONValue? {
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    private static func text(_ object: JSONObject, _ key: String) throws(DecodingError) -> String? {
        guard let value = present(object, key) else { return nil }
        guard let text = value.stringValue else { throw DecodingError(field: key) }
        return text
    }

    private static func requiredText(_ object: JSONObject, _ key: String) throws(DecodingError) -> String {
        guard let text = try text(object, key), !text.isEmpty else { throw DecodingError(field: key) }
        return text
    }

    /// An integral JSON number (Apple's dates and codes), no fraction or exponent.
    private static func integer(_ object: JSONObject, _ key: String) throws(DecodingError) -> Int64? {
        guard let value = present(object, key) else { return nil }
        guard case .number(let text) = value, let number = Int64(text) else { throw DecodingError(field: key) }
        return number
    }

    private static func flag(_ object: JSONObject, _ key: String) throws(DecodingError) -> Bool? {
        guard let value = present(object, key) else { return nil }
        guard case .bool(let flag) = value else { throw DecodingError(field: key) }
        return flag
    }
}
