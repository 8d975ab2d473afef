/// When a Finish Transaction call that got no 2xx is made again (docs/api.md: "retried until Apple
/// answers 2xx"). There is no last attempt: Apple keeps an unfinished transaction, and the
/// contract says until 2xx, so every other answer is retried, at most an hour apart. Only a call that
/// can never be made is given up: a transaction id that is not digits goes into no URL.
///
/// - 2xx: finished.
/// - 429: at its `Retry-After` (Apple's UNIX time in ms), at most an hour ahead; without a usable one,
///   as any failure.
/// - 5xx, no answer, and every 4xx alike (a 404 may be Apple not knowing the transaction yet, a 401 a
///   key the operator is about to fix): the webhook's backoff, 1 s after the first failure, twice as
///   long after each further one, at most 1 h apart. `last_error` says which it was.
/// - Not sent (Apple's queue full here): again after `notSentDelayMs`, the attempt not counted.
/// - An id that is not digits: given up, the row kept with its `last_error` and never due again.
public enum FinishRetryPolicy {
    /// The longest wait between two calls (a 429's `Retry-After` included).
    public static let longestDelayMs = WebhookRetryPolicy.longestDelayMs
    public static let notSentDelayMs: Int64 = 1000

    public enum Decision: Equatable, Sendable {
        /// Apple answered 2xx: record `finished_at`, drop the outbox row.
        case finished
        /// Call again not before `atMs` (UTC ms); `countsAttempt`: the call was made.
        case retry(atMs: Int64, countsAttempt: Bool)
        /// Never call: the row keeps its `last_error` and is due at `givenUpAtMs`, which never comes.
        case givenUp
    }

    /// The `next_attempt_at` of a row given up: 9999-12-31 23:59:59 UTC, the last `DATETIME`.
    public static let givenUpAtMs: Int64 = 253_402_300_799_000

    /// The decision after a call ended with `outcome` at `nowMs`; `failedAttempts` counts this one
    /// when it failed.
    public static func decide(_ outcome: FinishCallOutcome, failedAttempts: Int, nowMs: Int64) -> Decision {
        if outcome.isFinished { return .finished }
        switch outcome {
        case .notSent:
            return .retry(atMs: nowMs + notSentDelayMs, countsAttempt: false)
        case .invalidTransactionID:
            return .givenUp
        case .answered(429, _, let retryAfter?) where retryAfter >= ServerAPICallSequence.earliestRetryAfterMs:
            return .retry(atMs: min(max(retryAfter, nowMs), nowMs + longestDelayMs), countsAttempt: true)
        default:
            return .retry(
                atMs: nowMs + WebhookRetryPolicy.delayMs(afterFailedAttempts: failedAttempts), countsAttempt: true)
        }
    }
}
