/// A Pub/Sub push body: `{"message": {"data": "<base64>", "messageId",
/// "publishTime", "attributes"}, "subscription"}`. Pub/Sub delivers at least
/// once and in no order, so `messageId` is the key that makes a message pushed
/// again change nothing.
public struct GooglePushMessage: Equatable, Sendable {
    public let messageID: String
    /// The DeveloperNotification, decoded from `data`.
    public let notification: GoogleDeveloperNotification

    /// The longest message id taken (the column is `VARCHAR(128)`; Pub/Sub's are ~16 digits).
    public static let maxMessageIDLength = 128

    public static func parse(_ body: [UInt8]) throws(GoogleReplyError) -> GooglePushMessage {
        guard let value = try? JSONParser.parse(body), let message = value["message"]?.objectValue else {
            throw GoogleReplyError(.missingField, field: "message")
        }
        // Pub/Sub sends both spellings; either will do.
        guard let id = (message["messageId"] ?? message["message_id"])?.stringValue, !id.isEmpty,
            id.utf8.count <= maxMessageIDLength, id.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else {
            throw GoogleReplyError(.invalidField, field: "message.messageId")
        }
        guard let data = message["data"]?.stringValue, let decoded = Base64.decode(data) else {
            throw GoogleReplyError(.invalidField, field: "message.data")
        }
        return GooglePushMessage(messageID: id, notification: try GoogleDeveloperNotification.parse(decoded))
    }
}

/// Google Play's real-time developer notification (the push's `data`):
/// `version`, `packageName`, `eventTimeMillis` and one kind of notification.
/// Only identifiers are read from it: what a purchase is now is always asked of
/// the API, never believed from a notification.
public struct GoogleDeveloperNotification: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// `oneTimeProductNotification` 1: a purchase completed (also a pending one paid).
        case oneTimeProductPurchased(purchaseToken: String, productID: String?)
        /// `oneTimeProductNotification` 2: a pending purchase cancelled.
        case oneTimeProductCanceled(purchaseToken: String, productID: String?)
        /// Another `oneTimeProductNotification` type: stored.
        case oneTimeProductOther(notificationType: Int)
        /// `voidedPurchaseNotification`: refunded or charged back. `isPartial`:
        /// refundType 2, a quantity-based partial refund (the quantity is read
        /// from voided purchases).
        case voidedPurchase(purchaseToken: String, orderID: String?, isOneTimeProduct: Bool, isPartial: Bool)
        /// `pendingRefundReviewNotification`: Google asks the developer's view of a refund.
        case pendingRefundReview(
            pendingRefundToken: String, orderID: String, refundReason: String?, obfuscatedAccountID: String?)
        case subscription
        case test
        case other
    }

    public let packageName: String
    public let eventTimeMilliseconds: Int64
    public let kind: Kind

    public init(packageName: String, eventTimeMilliseconds: Int64, kind: Kind) {
        self.packageName = packageName
        self.eventTimeMilliseconds = eventTimeMilliseconds
        self.kind = kind
    }

    /// The `google_notifications.kind` it is stored as.
    public var storedKind: String {
        switch kind {
        case .oneTimeProductPurchased: return "oneTimeProductPurchased"
        case .oneTimeProductCanceled: return "oneTimeProductCanceled"
        case .oneTimeProductOther: return "oneTimeProductOther"
        case .voidedPurchase: return "voidedPurchase"
        case .pendingRefundReview: return "pendingRefundReview"
        case .subscription: return "subscription"
        case .test: return "test"
        case .other: return "other"
        }
    }

    public static func parse(_ bytes: [UInt8]) throws(GoogleReplyError) -> GoogleDeveloperNotification {
        guard let value = try? JSONParser.parse(bytes), let object = value.objectValue else {
            throw GoogleReplyError.notAnObject
        }
        guard let packageName = object["packageName"]?.stringValue, !packageName.isEmpty else {
            throw GoogleReplyError(.missingField, field: "packageName")
        }
        // eventTimeMillis is an int64 in JSON's proto mapping: a string, sometimes a number.
        guard let time = object["eventTimeMillis"]?.scalarText.flatMap({ Int64($0) }), time >= 0 else {
            throw GoogleReplyError(.invalidField, field: "eventTimeMillis")
        }
        return GoogleDeveloperNotification(
            packageName: packageName, eventTimeMilliseconds: time, kind: try kind(object))
    }

    private static func kind(_ object: JSONObject) throws(GoogleReplyError) -> Kind {
        if let product = object["oneTimeProductNotification"]?.objectValue {
            let field = "oneTimeProductNotification"
            let type = try integer(product, "notificationType", in: field)
            let sku = product["sku"]?.stringValue
            switch type {
            case 1:
                return .oneTimeProductPurchased(
                    purchaseToken: try string(product, "purchaseToken", in: field), productID: sku)
            case 2:
                return .oneTimeProductCanceled(
                    purchaseToken: try string(product, "purchaseToken", in: field), productID: sku)
            default: return .oneTimeProductOther(notificationType: type)
            }
        }
        if let voided = object["voidedPurchaseNotification"]?.objectValue {
            let field = "voidedPurchaseNotification"
            let productType = try integer(voided, "productType", in: field)
            // refundType is left out of full refunds at times: 1 (full) then.
            let refundType = voided["refundType"].map(\.isNull) == false
                ? try integer(voided, "refundType", in: field) : 1
            return .voidedPurchase(
                purchaseToken: try string(voided, "purchaseToken", in: field),
                orderID: voided["orderId"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 },
                isOneTimeProduct: productType == 2, isPartial: refundType == 2)
        }
        if let review = object["pendingRefundReviewNotification"]?.objectValue {
            let field = "pendingRefundReviewNotification"
            return .pendingRefundReview(
                pendingRefundToken: try string(review, "pendingRefundToken", in: field),
                orderID: try string(review, "orderId", in: field), refundReason: review["refundReason"]?.scalarText,
                obfuscatedAccountID: review["obfuscatedAccountId"]?.stringValue)
        }
        if object["subscriptionNotification"] != nil { return .subscription }
        if object["testNotification"] != nil { return .test }
        return .other
    }

    private static func string(
        _ object: JSONObject, _ name: String, in parent: String
    ) throws(GoogleReplyError) -> String {
        guard let text = object[name]?.stringValue, !text.isEmpty else {
            throw GoogleReplyError(.missingField, field: parent + "." + name)
        }
        return text
    }

    private static func integer(
        _ object: JSONObject, _ name: String, in parent: String
    ) throws(GoogleReplyError) -> Int {
        guard let text = object[name]?.scalarText, let number = Int(text) else {
            throw GoogleReplyError(.invalidField, field: parent + "." + name)
        }
        return number
    }
}
