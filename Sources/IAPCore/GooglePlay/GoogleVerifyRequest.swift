/// The body of `POST /v1/google/purchases/verify`:
/// `{"package_name": "com.example.game", "product_id": "gems_100", "purchase_token": "<token>",
///   "order_id": "<uuid>", "user_id": "u-1001", "app_version": "1.3.0"}`.
/// Nothing in it is believed about the purchase: the service reads the purchase
/// from Google by its token. The package and product only name what the client
/// thinks it bought, and are checked against Google's answer.
public struct GoogleVerifyRequest: Equatable, Sendable {
    /// The app's package name, as the client says (`IAP_GOOGLE_PACKAGES` must list it).
    public let packageName: String
    /// The product the client launched the billing flow for.
    public let productID: String
    /// Google's purchase token: the key of the purchase (never logged whole).
    public let purchaseToken: String
    /// The order the client made before paying, as a lowercase UUID.
    public let orderID: String?
    /// The user the goods go to; present whenever `orderID` is nil.
    public let userID: String?
    /// The app's version as the client knows it (for the sandbox policy's review switch).
    public let appVersion: String?

    public init(
        packageName: String, productID: String, purchaseToken: String, orderID: String? = nil,
        userID: String? = nil, appVersion: String? = nil
    ) {
        self.packageName = packageName
        self.productID = productID
        self.purchaseToken = purchaseToken
        self.orderID = orderID
        self.userID = userID
        self.appVersion = appVersion
    }

    /// The longest purchase token taken. Google's are a few hundred characters.
    public static let maxPurchaseTokenLength = 4096
    /// A Java package name is at most 255 characters in practice (Play's own limit is lower).
    public static let maxPackageNameLength = 255
    /// Play product ids are at most 139 characters; the column is `VARCHAR(128)` like Apple's.
    public static let maxProductIDLength = 128

    /// Reads a request body. Errors are the contract's 400s, as for the other
    /// verify routes: `invalid_json`, `missing_field` and `invalid_field`, each
    /// naming the field. `null` counts as absent; unknown keys are ignored.
    public static func parse(body: [UInt8]) throws(APIError) -> GoogleVerifyRequest {
        let fields = try RequestBody(body)
        let packageName = try fields.requiredString(
            "package_name", "must be a package name (letters, digits, _ and dots, 1 to \(maxPackageNameLength))",
            where: isPackageName)
        let productID = try fields.requiredString(
            "product_id", "must be a product id (letters, digits, _ . and -, 1 to \(maxProductIDLength))",
            where: isProductID)
        let purchaseToken = try fields.requiredString(
            "purchase_token", "must be a string of 1 to \(maxPurchaseTokenLength) printable ASCII characters",
            where: isPurchaseToken)
        let buyer = try BuyerFields(fields)
        if buyer.orderID == nil && buyer.userID == nil {
            throw APIError.missingField("user_id", "is required when order_id is absent")
        }
        return GoogleVerifyRequest(
            packageName: packageName, productID: productID, purchaseToken: purchaseToken, orderID: buyer.orderID,
            userID: buyer.userID, appVersion: buyer.appVersion)
    }

    /// 1 to 4096 printable ASCII characters (`!` to `~`, no space): what Google's
    /// tokens are made of, and what a URL path segment and the column can carry.
    public static func isPurchaseToken(_ text: String) -> Bool {
        (1...maxPurchaseTokenLength).contains(text.utf8.count) && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// Segments of ASCII letters, digits and `_`, each starting with a letter,
    /// joined by dots (`com.example.game`): Android's rule for an application id.
    static func isPackageName(_ text: String) -> Bool {
        guard (1...maxPackageNameLength).contains(text.utf8.count) else { return false }
        let segments = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return segments.allSatisfy { segment in
            guard let first = segment.first, first.isASCIILetter else { return false }
            return segment.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == UInt8(ascii: "_") }
        }
    }

    /// Play's rule for a product id: lowercase letters, digits, `_` and `.`,
    /// starting with a letter or digit; older ids may have uppercase letters
    /// and `-`, so those pass too.
    static func isProductID(_ text: String) -> Bool {
        guard (1...maxProductIDLength).contains(text.utf8.count), let first = text.utf8.first,
            first.isASCIILetter || first.isASCIIDigit
        else { return false }
        return text.utf8.allSatisfy {
            $0.isASCIILetter || $0.isASCIIDigit || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
                || $0 == UInt8(ascii: "-")
        }
    }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
    }

    fileprivate var isASCIIDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}
