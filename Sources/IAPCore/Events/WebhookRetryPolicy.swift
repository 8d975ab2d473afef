/// When a webhook POST that got no 2xx is made again (docs/events.md "Push:
/// the webhook"): 1 s after the first failure, twice as long after each further one, at
/// most 1 h apart, for 72 hours; then the event is `failed` until an operator
/// redelivers it.
public enum WebhookRetryPolicy {
    public static let firstDelayMs: Int64 = 1000
    public static let longestDelayMs: Int64 = 3_600_000
    /// How long an event is retried, from its creation (or its last redelivery).
    public static let retryWindowMs: Int64 = 72 * 3_600_000

    /// What becomes of an event whose POST failed.
    public enum Decision: Equatable, Sendable {
        /// Pending, POSTed again not before this (UTC ms).
        case retry(atMs: Int64)
        /// `failed`: its 72 hours are over.
        case giveUp
    }

    /// The wait after the `failedAttempts`-th failed POST (1, 2, 3, …): 1 s, 2 s, 4 s, … 1 h.
    public static func delayMs(afterFailedAttempts failedAttempts: Int) -> Int64 {
        let doublings = max(0, failedAttempts - 1)
        guard doublings < 12 else { return longestDelayMs }  // 2^12 s is past the hour
        return min(firstDelayMs << Int64(doublings), longestDelayMs)
    }

    /// The decision after a POST failed at `nowMs`; `failedAttempts` counts it.
    /// The last retry is made at the end of the window, never after it.
    public static func afterFailure(failedAttempts: Int, windowStartMs: Int64, nowMs: Int64) -> Decision {
        let windowEndMs = windowStartMs + retryWindowMs
        guard nowMs < windowEndMs else { return .giveUp }
        return .retry(atMs: min(nowMs + delayMs(afterFailedAttempts: failedAttempts), windowEndMs))
    }
}
