/// Google Play's body for `orders.reviewrefund`
/// (`POST …/applications/{pkg}/orders/{orderId}:reviewrefund`): the store-neutral
/// answer of a refund request (`RefundRequestDecision`) in Google's words. The
/// one Google-specific piece of answering a refund review, as
/// `AppStoreConsumptionRequest` is Apple's.
///
/// Google knows three preferences: Apple's `DECLINE` is `DECLINE`, `GRANT_FULL`
/// is `APPROVE`, and `GRANT_PRORATED` (which Google has no word for) or no
/// preference is `NEUTRAL`, which Google requires to be present. There is no
/// delivery status: the consumption carries what was used.
public struct GoogleRefundReviewRequest: Sendable, Equatable {
    public let body: JSONValue
    /// The body without `pendingRefundToken` (up to 4,096 characters, kept in its own column): what
    /// the ledger records as sent.
    public let recordedBody: JSONValue
    /// `refundPreference` of the body: `APPROVE`, `DECLINE` or `NEUTRAL`.
    public let refundPreference: String

    /// The review lasts 24 hours from the notification's `eventTimeMillis`; an answer after it is ignored.
    public static let answerWindowMs: Int64 = 24 * 3_600_000

    /// - Parameter pendingRefundToken: the token of the `pendingRefundReviewNotification`, sent back as it came.
    public init(_ answer: RefundRequestAnswer, pendingRefundToken: String) {
        refundPreference = Self.name(answer.preference)
        var members: [(key: String, value: JSONValue)] = [
            ("refundPreference", .string(refundPreference)),
            ("sampleContentProvided", .bool(answer.sampleContentProvided)),
        ]
        if let consumed = answer.consumedMilli {
            members.append(("consumptionPercentageMilliunits", .int(consumed)))
        }
        recordedBody = .object(JSONObject(members))
        body = .object(JSONObject([("pendingRefundToken", .string(pendingRefundToken))] + members))
    }

    /// Google's name of a preference (nil: none asked for).
    public static func name(_ preference: RefundPreference?) -> String {
        switch preference {
        case .decline: return "DECLINE"
        case .grantFull: return "APPROVE"
        case .grantProrated, nil: return "NEUTRAL"
        }
    }
}

/// What becomes of a refund review after one `reviewrefund` conversation (which
/// has retried 429 and 5xx within its own budget already): a 2xx is `sent`; any
/// other answer Google gives is `failed` with its error reason (only the first
/// answer counts at Google, so a refused one is never made again); Google
/// unreachable or refusing the service account is tried again with
/// `RefundRequestRetryPolicy`'s backoff until the review's deadline.
public enum GoogleRefundReviewReply {
    public static func outcome(
        of verdict: GoogleCallVerdict, attempt: Int, nowMs: Int64, deadlineMs: Int64, decided: Bool = false
    ) -> RefundRequestRetryPolicy.Outcome {
        let unanswered: String
        switch verdict {
        case .answered(let status, _) where (200...299).contains(status):
            return .sent
        case .answered(let status, let body):
            return .failed(error: "HTTP \(status)" + (GoogleFinishRetry.reason(body).map { " " + $0 } ?? ""))
        case .notFound:
            return .failed(error: "HTTP 404: Google does not know the order")
        case .unauthorized:
            unanswered = "Google refused the service account"
        case .unavailable:
            unanswered = "Google unavailable past the budget"
        }
        return RefundRequestRetryPolicy.outcome(
            of: .noAnswer(unanswered), attempt: attempt, nowMs: nowMs, deadlineMs: deadlineMs, appleDecided: decided)
    }
}
