/// What the `google_finishes` worker does with the verdict of one consume or acknowledge call.
/// Google's 3 days leave room for patience: a failure is tried again after the webhook's backoff
/// (growing to its longest delay), for as long as the row is there.
public enum GoogleFinishRetry {
    public enum Decision: Equatable, Sendable {
        /// Google took it, or says there is nothing left to take (400 `invalidPurchaseState`:
        /// consumed or acknowledged before, or no longer purchased): `finished_at`, the row gone.
        case finished
        /// Call again not before `atMs` (UTC ms).
        case retry(atMs: Int64)
        /// Google does not know the token (404, 410): no call can help; the row stays, due at
        /// `givenUpAtMs`, which never comes.
        case givenUp
    }

    /// The `next_attempt_at` of a row given up: the last `DATETIME`, as for Apple's finishes.
    public static let givenUpAtMs = FinishRetryPolicy.givenUpAtMs

    /// The `metrics` result and, for a failure, the `last_error` of a verdict.
    public static func result(_ verdict: GoogleCallVerdict) -> (metric: String, error: String?) {
        switch verdict {
        case .answered(let status, _) where (200...299).contains(status): return ("finished", nil)
        case .answered(400, let body) where reason(body) == "invalidPurchaseState": return ("already_finished", nil)
        case .answered(let status, let body):
            return ("http_\(status / 100)xx", "HTTP \(status) \(reason(body) ?? "")")
        case .notFound: return ("not_found", "404/410: Google does not know the purchase token")
        case .unauthorized: return ("unauthorized", "Google refused the service account")
        case .unavailable: return ("unavailable", "Google unavailable past the budget")
        }
    }

    public static func decide(_ verdict: GoogleCallVerdict, failedAttempts: Int, nowMs: Int64) -> Decision {
        if result(verdict).error == nil { return .finished }
        if verdict == .notFound { return .givenUp }
        return .retry(atMs: nowMs + WebhookRetryPolicy.delayMs(afterFailedAttempts: failedAttempts))
    }

    /// Google's error reason (`error.errors[0].reason`), when the body has one.
    static func reason(_ body: [UInt8]) -> String? {
        guard let error = (try? JSONParser.parse(body))?["error"] else { return nil }
        return error["errors"]?.arrayValue?.first?["reason"]?.stringValue ?? error["status"]?.stringValue
    }
}
