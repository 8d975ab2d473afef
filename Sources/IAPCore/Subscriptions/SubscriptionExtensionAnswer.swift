/// What Apple answered to a renewal-date extension (one chain, a mass request, or
/// a mass request's status): read from the HTTP status and body of a call that was
/// answered (not a 401, a 429 or a 5xx, which the call's retries deal with).
public enum SubscriptionExtensionAnswer: Equatable, Sendable {
    /// One chain extended: its period now ends at `effectiveDate` (ms since 1970 UTC).
    case extended(effectiveDate: Int64)
    /// A mass request Apple took; its status is polled by its request identifier.
    case massAccepted
    /// A mass request's progress.
    case massStatus(MassExtensionStatus)
    /// Apple said no: its `errorCode` (nil when the body had none) and what it means.
    case refused(errorCode: Int?, reason: String)

    /// The answer to `PUT .../extend/{originalTransactionId}`; nil for a body not as Apple documents.
    public static func singleChain(httpStatus: Int, body: [UInt8]) -> SubscriptionExtensionAnswer? {
        guard httpStatus == 200 else { return refusal(httpStatus: httpStatus, body: body) }
        guard let json = (try? JSONParser.parse(body))?.objectValue else { return nil }
        guard case .bool(true)? = json["success"] else {
            return .refused(errorCode: nil, reason: "Apple answered that the extension did not succeed")
        }
        guard case .number(let text)? = json["effectiveDate"], let date = Int64(text) else { return nil }
        return .extended(effectiveDate: date)
    }

    /// The answer to `POST .../extend/mass`; nil for a body not as Apple documents.
    public static func massRequest(httpStatus: Int, body: [UInt8], requestIdentifier: String) -> SubscriptionExtensionAnswer? {
        guard httpStatus == 200 else { return refusal(httpStatus: httpStatus, body: body) }
        guard case .string(let echoed)? = (try? JSONParser.parse(body))?.objectValue?["requestIdentifier"],
              echoed == requestIdentifier
        else { return nil }
        return .massAccepted
    }

    /// The answer to `GET .../extend/mass/{productId}/{requestIdentifier}`; nil for a body not as Apple documents.
    public static func massStatus(httpStatus: Int, body: [UInt8]) -> SubscriptionExtensionAnswer? {
        guard httpStatus == 200 else { return refusal(httpStatus: httpStatus, body: body) }
        guard let json = (try? JSONParser.parse(body))?.objectValue, case .bool(let complete)? = json["complete"] else {
            return nil
        }
        func number(_ key: String) -> Int64? {
            guard case .number(let text)? = json[key] else { return nil }
            return Int64(text)
        }
        return .massStatus(
            MassExtensionStatus(
                complete: complete, completeDate: number("completeDate"), succeededCount: number("succeededCount"),
                failedCount: number("failedCount")))
    }

    /// A 4xx with Apple's errorCode, told in words an operator can act on.
    static func refusal(httpStatus: Int, body: [UInt8]) -> SubscriptionExtensionAnswer {
        let code = ServerAPICallSequence.errorCode(body)
        return .refused(errorCode: code, reason: reason(errorCode: code, httpStatus: httpStatus))
    }

    static func reason(errorCode: Int?, httpStatus: Int) -> String {
        switch errorCode {
        case 4_000_009: return "Apple refused the number of days (1 to 90)"
        case 4_000_010: return "Apple refused the reason code (0 to 3)"
        case 4_000_011: return "Apple refused the request identifier"
        case 4_000_023: return "Apple refused the product id"
        case 4_030_004:
            return "the subscription is not eligible: it is not active (expired, in billing retry, in a grace period"
                + " past its expiry) or in a free offer period"
        case 4_030_005: return "the subscription was already extended twice in the last 365 days"
        case 4_030_007: return "the subscription came through Family Sharing: extend the purchaser's instead"
        case 4_040_005: return "Apple does not know this original transaction id in this environment"
        case 4_040_009: return "Apple does not know this mass extension request"
        case let code?: return "Apple refused it (HTTP \(httpStatus), errorCode \(code))"
        case nil: return "Apple refused it (HTTP \(httpStatus))"
        }
    }
}

/// How far a mass extension got (MassExtendRenewalDateStatusResponse).
public struct MassExtensionStatus: Equatable, Sendable {
    public let complete: Bool
    /// When Apple finished, ms since 1970 UTC; nil while it has not.
    public let completeDate: Int64?
    public let succeededCount: Int64?
    public let failedCount: Int64?

    public init(complete: Bool, completeDate: Int64?, succeededCount: Int64?, failedCount: Int64?) {
        self.complete = complete
        self.completeDate = completeDate
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }
}
