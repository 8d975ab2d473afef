import IAPCore
import SwiftASN1

/// The signed content of an app receipt, Apple's ASN.1 payload:
///
///     Payload          ::= SET OF ReceiptAttribute
///     ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }
///
/// with the fields docs/apple.md names (unknown types are skipped). Each value is
/// itself DER: a UTF8String or IA5String for texts, an IA5String in RFC 3339
/// for dates (empty when the purchase has none), an INTEGER for numbers.
public struct AppReceiptPayload: Equatable, Sendable {
    /// Field 0 as written: `Production`, `ProductionSandbox`, `Xcode`; nil when absent.
    public let environmentName: String?
    /// Field 1; nil when absent (0 in the sandbox).
    public let appItemID: Int64?
    /// Field 2.
    public let bundleID: String
    /// Field 3: the build number (CFBundleVersion), as verifyReceipt's `application_version`.
    public let applicationVersion: String?
    /// Field 19.
    public let originalApplicationVersion: String?
    /// Field 12, in ms since 1970: the date every certificate must be valid at.
    public let creationDateMs: Int64
    /// Field 17, each in receipt order.
    public let purchases: [AppReceiptPurchase]

    public init(
        environmentName: String?, appItemID: Int64? = nil, bundleID: String, applicationVersion: String?,
        originalApplicationVersion: String? = nil, creationDateMs: Int64, purchases: [AppReceiptPurchase]
    ) {
        self.environmentName = environmentName
        self.appItemID = appItemID
        self.bundleID = bundleID
        self.applicationVersion = applicationVersion
        self.originalApplicationVersion = originalApplicationVersion
        self.creationDateMs = creationDateMs
        self.purchases = purchases
    }

    /// The environment the receipt is accepted in: `Production`, or
    /// `ProductionSandbox` read as `Sandbox`; nil for anything else (`Xcode`).
    public var acceptedEnvironment: AppleEnvironment? {
        switch environmentName {
        case "Production": return .production
        case "ProductionSandbox": return .sandbox
        default: return nil
        }
    }
}

/// One in-app purchase of a receipt (field 17).
public struct AppReceiptPurchase: Equatable, Sendable {
    /// 1701; 1 when absent.
    public let quantity: Int
    /// 1702.
    public let productID: String
    /// 1703.
    public let transactionID: String
    /// 1705; nil when absent.
    public let originalTransactionID: String?
    /// 1704, in ms; nil when absent or empty.
    public let purchaseDateMs: Int64?
    /// 1708 (subscriptions).
    public let expiresDateMs: Int64?
    /// 1711 (subscriptions; 0 or absent otherwise).
    public let webOrderLineItemID: Int64?
    /// 1712: Apple refunded it.
    public let cancellationDateMs: Int64?

    public init(
        quantity: Int = 1, productID: String, transactionID: String, originalTransactionID: String? = nil,
        purchaseDateMs: Int64? = nil, expiresDateMs: Int64? = nil, webOrderLineItemID: Int64? = nil,
        cancellationDateMs: Int64? = nil
    ) {
        self.quantity = quantity
        self.productID = productID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.purchaseDateMs = purchaseDateMs
        self.expiresDateMs = expiresDateMs
        self.webOrderLineItemID = webOrderLineItemID
        self.cancellationDateMs = cancellationDateMs
    }
}

extension AppReceiptPayload {
    /// Reads the payload (DER or BER).
    /// - Throws: `invalidPayload` when it is not a SET of attributes, lacks its
    ///   bundle id (2) or creation date (12), or a field is not of its type.
    public init(berEncoded content: ArraySlice<UInt8>) throws(AppReceiptError) {
        do {
            var fields = ReceiptFields()
            try ReceiptFields.each(in: content) { type, value in
                switch type {
                case 0: fields.environment = try ReceiptValue.text(value)
                case 1: fields.appItemID = try ReceiptValue.integer(value)
                case 2: fields.bundleID = try ReceiptValue.text(value)
                case 3: fields.applicationVersion = try ReceiptValue.text(value)
                case 12: fields.creationDateMs = try ReceiptValue.date(value)
                case 17: fields.purchases.append(try AppReceiptPurchase(berEncoded: value))
                case 19: fields.originalApplicationVersion = try ReceiptValue.text(value)
                default: break
                }
            }
            guard let bundleID = fields.bundleID, let creationDateMs = fields.creationDateMs else {
                throw AppReceiptError.invalidPayload
            }
            self.init(
                environmentName: fields.environment, appItemID: fields.appItemID, bundleID: bundleID,
                applicationVersion: fields.applicationVersion, originalApplicationVersion: fields.originalApplicationVersion,
                creationDateMs: creationDateMs, purchases: fields.purchases)
        } catch {
            throw AppReceiptError.invalidPayload
        }
    }
}

extension AppReceiptPurchase {
    /// An in-app purchase's own SET of attributes.
    init(berEncoded content: ArraySlice<UInt8>) throws {
        var quantity = 1
        var productID: String?
        var transactionID: String?
        var originalTransactionID: String?
        var purchaseDateMs: Int64?
        var expiresDateMs: Int64?
        var webOrderLineItemID: Int64?
        var cancellationDateMs: Int64?
        try ReceiptFields.each(in: content) { type, value in
            switch type {
            case 1701:
                guard let read = Int(exactly: try ReceiptValue.integer(value)), read >= 0 else {
                    throw AppReceiptError.invalidPayload
                }
                quantity = read
            case 1702: productID = try ReceiptValue.text(value)
            case 1703: transactionID = try ReceiptValue.text(value)
            case 1704: purchaseDateMs = try ReceiptValue.date(value)
            case 1705: originalTransactionID = try ReceiptValue.text(value)
            case 1708: expiresDateMs = try ReceiptValue.date(value)
            case 1711: webOrderLineItemID = try ReceiptValue.integer(value)
            case 1712: cancellationDateMs = try ReceiptValue.date(value)
            default: break
            }
        }
        guard let productID, !productID.isEmpty, let transactionID, !transactionID.isEmpty else {
            throw AppReceiptError.invalidPayload
        }
        self.init(
            quantity: quantity, productID: productID, transactionID: transactionID,
            originalTransactionID: originalTransactionID.flatMap { $0.isEmpty ? nil : $0 },
            purchaseDateMs: purchaseDateMs, expiresDateMs: expiresDateMs,
            webOrderLineItemID: webOrderLineItemID, cancellationDateMs: cancellationDateMs)
    }
}

/// The receipt-level fields as they are read, before the required ones are checked.
private struct ReceiptFields {
    var environment: String?
    var appItemID: Int64?
    var bundleID: String?
    var applicationVersion: String?
    var originalApplicationVersion: String?
    var creationDateMs: Int64?
    var purchases: [AppReceiptPurchase] = []

    /// Calls `body` with each attribute's type and value bytes, in order.
    static func each(
        in content: ArraySlice<UInt8>, _ body: (Int, ArraySlice<UInt8>) throws -> Void
    ) throws {
        let set = try BER.parse(content)
        try BER.set(set, identifier: .set) { attributes in
            while let attribute = attributes.next() {
                try BER.sequence(attribute, identifier: .sequence) { parts in
                    let type = try Int(berEncoded: &parts)
                    _ = try Int(berEncoded: &parts)  // version
                    let value = try ASN1OctetString(berEncoded: &parts).bytes
                    guard parts.next() == nil else { throw AppReceiptError.invalidPayload }
                    try body(type, value)
                }
            }
        }
    }
}

/// Readers of an attribute's value, itself an encoded ASN.1 value.
enum ReceiptValue {
    /// A UTF8String or IA5String (Apple uses either for texts).
    static func text(_ value: ArraySlice<UInt8>) throws -> String {
        let node = try BER.parse(value)
        guard node.identifier == .utf8String || node.identifier == .ia5String,
              case .primitive(let bytes) = node.content,
              let text = String(validating: bytes, as: UTF8.self)
        else { throw AppReceiptError.invalidPayload }
        return text
    }

    static func integer(_ value: ArraySlice<UInt8>) throws -> Int64 {
        try Int64(berEncoded: value)
    }

    /// An RFC 3339 date (`2014-07-24T09:11:01Z`, fractions of a second
    /// dropped), nil when the text is empty.
    static func date(_ value: ArraySlice<UInt8>) throws -> Int64? {
        let text = try Self.text(value)
        guard !text.isEmpty else { return nil }
        guard let ms = AppleDate.milliseconds(fromRFC3339: text) else { throw AppReceiptError.invalidPayload }
        return ms
    }
}
