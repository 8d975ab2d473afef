/// Apple's body for Send Consumption Information (v2, `ConsumptionRequest`):
/// `PUT /inApps/v2/transactions/consumption/{transactionId}`. The one
/// App Store-specific piece of answering a refund request.
public struct AppStoreConsumptionRequest: Sendable, Equatable {
    /// The answer as Apple takes it (`customerConsented` is always true: without
    /// consent nothing is sent).
    public let body: JSONValue
    /// `refundPreference` of the body: `DECLINE`, `GRANT_FULL`, `GRANT_PRORATED`; nil when left out.
    public let refundPreference: String?

    /// Apple's `productType` of an auto-renewable subscription (`consumption_requests.product_type`).
    public static let autoRenewableProductType = "Auto-Renewable Subscription"

    public init(_ answer: RefundRequestAnswer) {
        refundPreference = answer.preference.map(Self.name)
        var members: [(key: String, value: JSONValue)] = [
            ("customerConsented", .bool(true)),
            ("deliveryStatus", .string(answer.delivered ? "DELIVERED" : "UNDELIVERED_OTHER")),
            ("sampleContentProvided", .bool(answer.sampleContentProvided)),
        ]
        if let consumed = answer.consumedMilli {
            members.append(("consumptionPercentage", .int(consumed)))
        }
        if let refundPreference {
            members.append(("refundPreference", .string(refundPreference)))
        }
        body = .object(JSONObject(members))
    }

    /// Apple's name of a preference.
    public static func name(_ preference: RefundPreference) -> String {
        switch preference {
        case .decline: return "DECLINE"
        case .grantFull: return "GRANT_FULL"
        case .grantProrated: return "GRANT_PRORATED"
        }
    }
}
