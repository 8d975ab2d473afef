/// An App Store Server Notification V2 as Apple signed it (the payload of
/// `signedPayload`, docs/apple.md "App Store Server Notifications V2"), once its
/// signature is checked: what the service needs to store it and apply it.
/// Fields it does not name stay in the stored JWS; none is refused.
public struct ServerNotification: Equatable, Sendable {
    /// `ONE_TIME_CHARGE`, `REFUND`, `REFUND_REVERSED`, `TEST`, ...
    public let notificationType: String
    public let subtype: String?
    /// Lowercase: Apple writes it lowercase, and the primary key must not see two spellings of one UUID.
    public let notificationUUID: String
    /// Milliseconds since 1970 UTC: notifications apply in this order.
    public let signedDate: Int64
    /// `data.bundleId` (or `summary.bundleId` for the types that carry a summary).
    public let bundleID: String
    /// `Production` or `Sandbox`.
    public let environment: String
    /// `data.signedTransactionInfo`: a JWS of its own, verified before it is used; nil for `TEST`.
    public let signedTransactionInfo: String?
    /// `data.signedRenewalInfo` (subscriptions): verified too when present.
    public let signedRenewalInfo: String?
    /// `data.consumptionRequestReason` of a `CONSUMPTION_REQUEST` (`UNINTENDED_PURCHASE`, ...); nil when
    /// absent or not a string (an optional field of Apple's, never a reason to refuse the notification).
    public let consumptionRequestReason: String?

    /// Why a verified payload is still not a notification the service can take.
    public struct DecodingError: Error, Equatable, Sendable {
        public let field: String
    }

    /// Reads the fields from the verified payload's JSON object.
    public init(json: JSONObject) throws(DecodingError) {
        notificationType = try Self.requiredText(json, "notificationType")
        subtype = try Self.text(json, "subtype")
        guard let uuid = VerifyRequest.lowercaseUUID(try Self.requiredText(json, "notificationUUID")) else {
            throw DecodingError(field: "notificationUUID")
        }
        notificationUUID = uuid
        guard case .number(let dateText)? = json["signedDate"], let date = Int64(dateText) else {
            throw DecodingError(field: "signedDate")
        }
        signedDate = date
        guard let data = json["data"]?.objectValue ?? json["summary"]?.objectValue else {
            throw DecodingError(field: "data")
        }
        bundleID = try Self.requiredText(data, "bundleId")
        environment = try Self.requiredText(data, "environment")
        signedTransactionInfo = try Self.text(data, "signedTransactionInfo")
        signedRenewalInfo = try Self.text(data, "signedRenewalInfo")
        consumptionRequestReason = data["consumptionRequestReason"]?.stringValue
    }

    /// What the type does to its transaction (the table of effects in docs/api.md).
    public var kind: NotificationKind {
        NotificationKind(notificationType: notificationType)
    }

    private static func text(_ object: JSONObject, _ key: String) throws(DecodingError) -> String? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let text = value.stringValue else { throw DecodingError(field: key) }
        return text
    }

    private static func requiredText(_ object: JSONObject, _ key: String) throws(DecodingError) -> String {
        guard let text = try text(object, key), !text.isEmpty else { throw DecodingError(field: key) }
        return text
    }
}
