/// A one-time product purchase as Google's `purchases.productsv2` answers it
/// (`ProductPurchaseV2`). Only what the service decides on is kept; unknown
/// fields are ignored, as Google adds fields over time.
public struct GooglePurchase: Equatable, Sendable {
    /// `purchaseStateContext.purchaseState`. productsv2 spells the states out;
    /// the older `purchases.products` numbers them 0/1/2 in another order than
    /// the client library: only the names are read here.
    public enum State: String, Equatable, Sendable {
        case purchased = "PURCHASED"
        /// Paid later (cash at a shop): not paid yet, never delivered.
        case pending = "PENDING"
        case cancelled = "CANCELLED"
    }

    public struct LineItem: Equatable, Sendable {
        public let productID: String
        /// `productOfferDetails.quantity` (1 unless the product allows several).
        public let quantity: Int

        public init(productID: String, quantity: Int) {
            self.productID = productID
            self.quantity = quantity
        }
    }

    public let lineItems: [LineItem]
    public let state: State
    /// Google's order id (`GPA.…`); absent for some promotional and test purchases.
    public let orderID: String?
    /// `testPurchaseContext` present: a license tester's purchase, paid by no one.
    public let isTestPurchase: Bool
    /// What the app set with `setObfuscatedAccountId` (here: the order id).
    public let obfuscatedAccountID: String?
    /// `acknowledgementState` is `ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED`.
    public let isAcknowledged: Bool
    /// `purchaseCompletionTime` in milliseconds since 1970 (to the second); absent until paid.
    public let completionTimeMilliseconds: Int64?
    /// `regionCode` (ISO 3166-1 alpha-2), when given.
    public let regionCode: String?

    public init(
        lineItems: [LineItem], state: State, orderID: String? = nil, isTestPurchase: Bool = false,
        obfuscatedAccountID: String? = nil, isAcknowledged: Bool = false, completionTimeMilliseconds: Int64? = nil,
        regionCode: String? = nil
    ) {
        self.lineItems = lineItems
        self.state = state
        self.orderID = orderID
        self.isTestPurchase = isTestPurchase
        self.obfuscatedAccountID = obfuscatedAccountID
        self.isAcknowledged = isAcknowledged
        self.completionTimeMilliseconds = completionTimeMilliseconds
        self.regionCode = regionCode
    }

    /// Reads Google's answer body. A purchase without a line item or a state
    /// it knows cannot be decided on: that is an error, as an unreadable answer.
    public static func parse(_ body: [UInt8]) throws(GoogleReplyError) -> GooglePurchase {
        guard let value = try? JSONParser.parse(body), let object = value.objectValue else {
            throw GoogleReplyError.notAnObject
        }
        return try parse(object)
    }

    public static func parse(_ object: JSONObject) throws(GoogleReplyError) -> GooglePurchase {
        guard let items = object["productLineItem"]?.arrayValue, !items.isEmpty else {
            throw GoogleReplyError(.missingField, field: "productLineItem")
        }
        var lineItems: [LineItem] = []
        for (index, item) in items.enumerated() {
            lineItems.append(try lineItem(item, field: "productLineItem[\(index)]"))
        }
        guard let stateText = object["purchaseStateContext"]?["purchaseState"]?.stringValue else {
            throw GoogleReplyError(.missingField, field: "purchaseStateContext.purchaseState")
        }
        guard let state = State(rawValue: stateText) else {
            throw GoogleReplyError(.invalidField, field: "purchaseStateContext.purchaseState")
        }
        var completion: Int64?
        if let text = try optionalString(object, "purchaseCompletionTime") {
            guard let milliseconds = AppleDate.milliseconds(fromRFC3339: text) else {
                throw GoogleReplyError(.invalidField, field: "purchaseCompletionTime")
            }
            completion = milliseconds
        }
        let test = object["testPurchaseContext"].map { !$0.isNull } ?? false
        return GooglePurchase(
            lineItems: lineItems, state: state, orderID: try optionalString(object, "orderId"), isTestPurchase: test,
            obfuscatedAccountID: try optionalString(object, "obfuscatedExternalAccountId"),
            isAcknowledged: try optionalString(object, "acknowledgementState") == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED",
            completionTimeMilliseconds: completion, regionCode: try optionalString(object, "regionCode"))
    }

    private static func lineItem(_ item: JSONValue, field: String) throws(GoogleReplyError) -> LineItem {
        guard let productID = item["productId"]?.stringValue, !productID.isEmpty else {
            throw GoogleReplyError(.missingField, field: field + ".productId")
        }
        // Google leaves quantity out of single-quantity purchases at times: 1 then.
        guard let quantityValue = item["productOfferDetails"]?["quantity"], !quantityValue.isNull else {
            return LineItem(productID: productID, quantity: 1)
        }
        guard let text = quantityValue.scalarText, let quantity = Int(text), quantity >= 1 else {
            throw GoogleReplyError(.invalidField, field: field + ".productOfferDetails.quantity")
        }
        return LineItem(productID: productID, quantity: quantity)
    }

    private static func optionalString(_ object: JSONObject, _ name: String) throws(GoogleReplyError) -> String? {
        guard let value = object[name], !value.isNull else { return nil }
        guard let text = value.stringValue else { throw GoogleReplyError(.invalidField, field: name) }
        return text.isEmpty ? nil : text
    }
}

/// Why an answer of Google's API could not be read. Like an unreadable answer
/// from Apple (the same kinds): a passing fault, never a crash. Descriptions
/// name fields only.
public struct GoogleReplyError: Error, Equatable, Sendable, CustomStringConvertible {
    public typealias Kind = AppleReplyError.Kind

    public let kind: Kind
    public let field: String

    public init(_ kind: Kind, field: String) {
        self.kind = kind
        self.field = field
    }

    public static let notAnObject = GoogleReplyError(.notAnObject, field: "")

    public var description: String {
        switch kind {
        case .notAnObject: return "Google's answer is not a JSON object"
        case .missingField: return "Google's answer has no \(field)"
        case .invalidField: return "Google's answer has an unreadable \(field)"
        }
    }
}
