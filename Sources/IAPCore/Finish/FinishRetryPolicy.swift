/// When a Finish Transaction call that got no 2xx is made again (API.md: "retried with backoff until
/// Apple answers 2xx"). There is no last attempt: Apple keeps an unfinished transaction, and the
/// contract says until 2xx, so every other answer is retried, at most an hour apart.
///
/// - 2xx: finished.
/// - 429: at its `Retry-After` (Apple's UNIX time in ms), at most an hour ahead; without a usable one,
///   as any failure.
/// - 5xx, no answer, and every 4xx alike (a 404 may be Apple not knowing the transaction yet, a 401 a
///   key the operator is about to fix): 1 s after the first failure, twice as long after each further
///   one, at most 1 h apart. `last_error` says which it was.
/// - Not sent (Apple's queue full here): again after `notSentDelayMs`, the attempt not counted.
public enum FinishRetryPolicy {
    public static let firstDelayMs: Int64 = 1000
    public static let longestDelayMs: Int64 = 3_600_000
    public static let notSentDelayMs: Int64 = 1000

    public enum Decision: Equatable, Sendable {
        /// Apple answered 2xx: record `finished_at`, drop the outbox row.
        case finished
        /// Call again not before `atMs` (UTC ms); `countsAttempt`: the call was made.
        case retry(atMs: Int64, countsAttempt: Bool)
    }

    /// The wait after the `failedAttempts`-th failed call (1, 2, 3, …): 1 s, 2 s, 4 s, … 1 h.
    public static func delayMs(afterFailedAttempts failedAttempts: Int) -> Int64 {
        let doublings = max(0, failedAttempts - 1)
        guard doublings < 12 else { return longestDelayMs }  // 2^12 s is past the hour
        return min(firstDelayMs << Int64(doublings), longestDelayMs)
    }

    /// The decision after a call ended with `outcome` at `nowMs`; `failedAttempts` counts this one
    /// when it failed.
    public static func decide(_ outcome: FinishCallOutcome, failedAttempts: Int, nowMs: Int64) -> Decision {
        if outcome.isFinished { return .finished }
        switch outcome {
        case .notSent:
            return .retry(atMs: nowMs + notSentDelayMs, countsAttempt: false)
        case .answered(429, _, let retryAfter?) where retryAfter >= ServerAPICallSequence.earliestRetryAfterMs:
            return .retry(atMs: min(max(retryAfter, nowMs), nowMs + longestDelayMs), countsAttempt: true)
        default:
            return .retry(atMs: nowMs + delayMs(afterFailedAttempts: failedAttempts), countsAttempt: true)
        }
    }
}
