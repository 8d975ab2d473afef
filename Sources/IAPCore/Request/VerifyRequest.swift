/// The body of `POST /v1/receipts/verify`:
/// `{"receipt_data": "<base64>", "order_id": "<uuid>", "transaction_id": "1000000117894869",
///   "user_id": "u-1001", "app_version": "1.3.0"}`.
public struct VerifyRequest: Equatable, Sendable {
    /// The receipt, from `receipt_data` or Apple's own key `receipt-data`.
    public let receipt: ReceiptData
    /// The order the client made before paying, as a lowercase UUID.
    public let orderID: String?
    /// The transaction the client is finishing, as decimal digits.
    public let transactionID: String?
    /// The user the goods go to; present whenever `orderID` is nil.
    public let userID: String?
    /// The app's marketing version as the client knows it (for the review switch).
    public let appVersion: String?

    public init(
        receipt: ReceiptData, orderID: String? = nil, transactionID: String? = nil,
        userID: String? = nil, appVersion: String? = nil
    ) {
        self.receipt = receipt
        self.orderID = orderID
        self.transactionID = transactionID
        self.userID = userID
        self.appVersion = appVersion
    }

    /// The most digits a transaction id may have (`VARCHAR(64)`).
    public static let maxTransactionIDDigits = 64
    /// The most characters an app version may have.
    public static let maxAppVersionLength = 32
    /// The longest `receipt_data` taken, in characters (about 1 MiB decoded): a
    /// limit against abuse, far above what an app receipt weighs.
    public static let maxReceiptCharacters = 1_400_000

    /// Reads a request body. Errors are the contract's 400s: `invalid_json`,
    /// `missing_field`, `invalid_field` (each naming the field) and
    /// `invalid_receipt_data`. `null` counts as absent; unknown keys are ignored.
    public static func parse(body: [UInt8]) throws(APIError) -> VerifyRequest {
        let fields = try RequestBody(body)
        let receipt = try readReceipt(fields)
        let buyer = try BuyerFields(fields)
        let transactionID = try readTransactionID(fields)
        if buyer.orderID == nil && buyer.userID == nil {
            throw APIError.missingField("user_id", "is required when order_id is absent")
        }
        return VerifyRequest(
            receipt: receipt, orderID: buyer.orderID, transactionID: transactionID,
            userID: buyer.userID, appVersion: buyer.appVersion)
    }

    /// `receipt_data` wins over `receipt-data` when both are present.
    private static func readReceipt(_ fields: RequestBody) throws(APIError) -> ReceiptData {
        let name = fields["receipt_data"] != nil ? "receipt_data" : "receipt-data"
        guard let value = fields[name] else { throw APIError.missingField("receipt_data") }
        guard let text = value.stringValue else {
            throw APIError.invalidField(name, "must be a base64 string")
        }
        guard text.utf8.count <= maxReceiptCharacters else {
            throw APIError.invalidField(name, "is longer than \(maxReceiptCharacters) characters")
        }
        return try ReceiptData.normalise(text)
    }

    /// Clients send the id as a string or as a JSON integer; both become digits.
    static func readTransactionID(_ fields: RequestBody) throws(APIError) -> String? {
        guard let value = fields["transaction_id"] else { return nil }
        let text: String
        switch value {
        case .string(let string), .number(let string): text = string
        default: text = ""
        }
        let isDigits = text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard isDigits, (1...maxTransactionIDDigits).contains(text.utf8.count) else {
            throw APIError.invalidField(
                "transaction_id", "must be 1 to \(maxTransactionIDDigits) decimal digits, as a string or an integer")
        }
        return text
    }

    /// `text` as a lowercase UUID (an order id), or nil when it is not one.
    public static func lowercaseUUID(_ text: String) -> String? {
        isUUID(text) ? text.lowercased() : nil
    }

    /// 8-4-4-4-12 hex digits, in any case.
    static func isUUID(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return false }
        for (position, byte) in utf8.enumerated() {
            switch position {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return false }
            default:
                guard byte.isHexDigit else { return false }
            }
        }
        return true
    }

    /// 1...32 printable ASCII characters (space to tilde).
    static func isAppVersion(_ text: String) -> Bool {
        (1...maxAppVersionLength).contains(text.utf8.count)
            && text.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            return true
        default:
            return false
        }
    }
}
