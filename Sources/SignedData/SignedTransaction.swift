import IAPCore

/// A StoreKit 2 transaction as Apple signed it (JWSTransactionDecodedPayload).
/// Dates are milliseconds since 1970 UTC and `price` is in milliunits, as Apple
/// writes them. Fields this type does not name stay in `payload`: Apple adds
/// some every year, and none is refused.
public struct SignedTransaction: Equatable, Sendable {
    public let transactionID: String
    public let originalTransactionID: String
    public let bundleID: String
    public let productID: String
    public let purchaseDate: Int64
    public let quantity: Int
    /// `Consumable`, `Non-Consumable`, `Auto-Renewable Subscription`, `Non-Renewing Subscription`.
    public let type: String
    /// The UUID the app passed to StoreKit (our order id), as written.
    public let appAccountToken: String?
    /// `PURCHASED` or `FAMILY_SHARED`.
    public let inAppOwnershipType: String?
    public let signedDate: Int64
    /// `Production`, `Sandbox`, `Xcode` or `LocalTesting`.
    public let environment: String
    public let storefront: String?
    public let price: Int64?
    public let currency: String?
    /// Set when Apple refunded or revoked the transaction.
    public let revocationDate: Int64?
    public let revocationReason: Int?
    /// `REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE`.
    public let revocationType: String?
    /// Milliunits of the price refunded (100000 is all of it).
    public let revocationPercentage: Int?
    /// Apple's payload, byte for byte, to store as it came.
    public let payload: [UInt8]

    /// Reads the fields from the payload's JSON object.
    /// - Throws: `SignedDataError.invalidPayload` when a field the service
    ///   needs is absent, or any named field has the wrong type.
    public init(payload: [UInt8], json: JSONObject) throws(SignedDataError) {
        let fields = PayloadFields(json)
        self.transactionID = try fields.requiredText("transactionId")
        self.originalTransactionID = try fields.requiredText("originalTransactionId")
        self.bundleID = try fields.requiredText("bundleId")
        self.productID = try fields.requiredText("productId")
        self.purchaseDate = try fields.requiredInteger("purchaseDate")
        self.quantity = try fields.requiredInt("quantity")
        self.type = try fields.requiredText("type")
        self.appAccountToken = try fields.text("appAccountToken")
        self.inAppOwnershipType = try fields.text("inAppOwnershipType")
        self.signedDate = try fields.requiredInteger("signedDate")
        self.environment = try fields.requiredText("environment")
        self.storefront = try fields.text("storefront")
        self.price = try fields.integer("price")
        self.currency = try fields.text("currency")
        self.revocationDate = try fields.integer("revocationDate")
        self.revocationReason = try fields.int("revocationReason")
        self.revocationType = try fields.text("revocationType")
        self.revocationPercentage = try fields.int("revocationPercentage")
        self.payload = payload
    }
}

/// Typed reads of a payload's members; null reads as absent.
struct PayloadFields {
    let object: JSONObject

    init(_ object: JSONObject) {
        self.object = object
    }

    func text(_ key: String) throws(SignedDataError) -> String? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let text = value.stringValue else { throw SignedDataError.invalidPayload }
        return text
    }

    /// An integral JSON number (Apple's dates, prices and counts), no fraction or exponent.
    func integer(_ key: String) throws(SignedDataError) -> Int64? {
        guard let value = object[key], !value.isNull else { return nil }
        guard case .number(let text) = value, let number = Int64(text) else { throw SignedDataError.invalidPayload }
        return number
    }

    func int(_ key: String) throws(SignedDataError) -> Int? {
        guard let number = try integer(key) else { return nil }
        guard let small = Int(exactly: number) else { throw SignedDataError.invalidPayload }
        return small
    }

    func requiredText(_ key: String) throws(SignedDataError) -> String {
        guard let text = try text(key) else { throw SignedDataError.invalidPayload }
        return text
    }

    func requiredInteger(_ key: String) throws(SignedDataError) -> Int64 {
        guard let number = try integer(key) else { throw SignedDataError.invalidPayload }
        return number
    }

    func requiredInt(_ key: String) throws(SignedDataError) -> Int {
        guard let number = try int(key) else { throw SignedDataError.invalidPayload }
        return number
    }
}
