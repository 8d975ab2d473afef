/// Why a subscription's renewal date is extended (Apple's `extendReasonCode`).
public enum SubscriptionExtensionReason: Int, CaseIterable, Sendable {
    case undeclared = 0
    case customerSatisfaction = 1
    case other = 2
    /// The usual one: players compensated for an outage.
    case serviceIssueOrOutage = 3
}

/// One request to push a subscription's renewal date back (Extend a Subscription
/// Renewal Date, or its mass form for every active subscriber of a product),
/// checked before Apple is called: Apple takes 1 to 90 days and a reason code
/// 0 to 3, and names each request by an identifier of at most 128 characters
/// that the caller makes up (a UUID), so that asking again with the same one
/// extends nothing twice.
public struct SubscriptionExtensionRequest: Equatable, Sendable {
    public static let maximumDays = 90
    public static let maximumRequestIdentifierLength = 128

    public let days: Int
    public let reason: SubscriptionExtensionReason
    public let requestIdentifier: String

    /// Why a request is not sent.
    public enum Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        case days(Int)
        case reason(Int)
        case requestIdentifier
        case originalTransactionID(String)
        case productID(String)

        public var description: String {
            switch self {
            case .days(let days):
                return "--days must be 1 to \(SubscriptionExtensionRequest.maximumDays) (Apple's limit), not \(days)"
            case .reason(let code):
                return "--reason must be 0 (undeclared), 1 (customer satisfaction), 2 (other) or 3 (service issue"
                    + " or outage), not \(code)"
            case .requestIdentifier:
                return "the request identifier must be 1 to \(SubscriptionExtensionRequest.maximumRequestIdentifierLength)"
                    + " letters, digits or dashes"
            case .originalTransactionID(let id):
                return "\(id) is not an original transaction id (1 to 64 digits)"
            case .productID(let id):
                return "\(id) is not a product id (1 to 128 letters, digits, '.', '_' or '-')"
            }
        }
    }

    /// - Throws: `Invalid` for days outside 1...90, a reason code outside 0...3, or an identifier that is
    ///   empty, too long or not letters, digits and dashes (it goes into a URL path).
    public init(days: Int, reasonCode: Int, requestIdentifier: String) throws(Invalid) {
        guard (1...Self.maximumDays).contains(days) else { throw .days(days) }
        guard let reason = SubscriptionExtensionReason(rawValue: reasonCode) else { throw .reason(reasonCode) }
        guard (1...Self.maximumRequestIdentifierLength).contains(requestIdentifier.utf8.count),
              requestIdentifier.utf8.allSatisfy({ Self.isAlphanumeric($0) || $0 == UInt8(ascii: "-") })
        else { throw .requestIdentifier }
        self.days = days
        self.reason = reason
        self.requestIdentifier = requestIdentifier
    }

    /// A new identifier for a request made now: a random (version 4) UUID, as Apple suggests.
    public static func newRequestIdentifier() -> String {
        var random = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }
        return [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { hex[$0].joined() }.joined(separator: "-")
    }

    /// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}` for one chain.
    public static func path(originalTransactionID: String) throws(Invalid) -> String {
        guard AppleTransactionID.isValid(originalTransactionID) else { throw .originalTransactionID(originalTransactionID) }
        return "/inApps/v1/subscriptions/extend/" + originalTransactionID
    }

    /// `POST` here for every active subscriber of a product.
    public static let massPath = "/inApps/v1/subscriptions/extend/mass"

    /// `GET` here for how far a mass extension got.
    public func massStatusPath(productID: String) throws(Invalid) -> String {
        try Self.checkProductID(productID)
        return Self.massPath + "/" + productID + "/" + requestIdentifier
    }

    /// ExtendRenewalDateRequest: `{"extendByDays", "extendReasonCode", "requestIdentifier"}`.
    public var body: [UInt8] {
        JSONValue.object(fields).serialized()
    }

    /// MassExtendRenewalDateRequest: the same fields and `productId` (every storefront).
    public func massBody(productID: String) throws(Invalid) -> [UInt8] {
        try Self.checkProductID(productID)
        var object = fields
        object.members.append((key: "productId", value: .string(productID)))
        return JSONValue.object(object).serialized()
    }

    private var fields: JSONObject {
        [
            "extendByDays": .int(days), "extendReasonCode": .int(reason.rawValue),
            "requestIdentifier": .string(requestIdentifier),
        ]
    }

    /// A product id goes into the status URL's path as it is: only characters that need no escaping.
    private static func checkProductID(_ id: String) throws(Invalid) {
        guard (1...128).contains(id.utf8.count),
              id.utf8.allSatisfy({ isAlphanumeric($0) || ".-_".utf8.contains($0) })
        else { throw .productID(id) }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}
