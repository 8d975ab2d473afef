/// What becomes of a refund request after a PUT to the store, and when a
/// failed one is made again (docs/events.md "Refund requests"): a 429 after its
/// `Retry-After`, a 5xx or no answer after a backoff (5 s doubling to 10 min),
/// until the request's deadline, after which the store ignores any answer.
public enum RefundRequestRetryPolicy {
    public static let firstDelayMs: Int64 = 5000
    public static let longestDelayMs: Int64 = 600_000

    /// How the store answered one PUT.
    public enum Result: Sendable, Equatable {
        /// HTTP status and, for a 429, `Retry-After` (UTC ms) when the answer gave one.
        case answered(httpStatus: Int, errorCode: Int?, retryAfterUnixMs: Int64?)
        /// No answer: a timeout, a connection or TLS failure.
        case noAnswer(String)

        /// An answer, with the `errorCode` of its JSON body when it has one.
        public static func answered(httpStatus: Int, body: [UInt8], retryAfterUnixMs: Int64?) -> Result {
            var errorCode: Int?
            if let json = try? JSONParser.parse(body), case .number(let text)? = json.objectValue?["errorCode"] {
                errorCode = Int(text)
            }
            return .answered(httpStatus: httpStatus, errorCode: errorCode, retryAfterUnixMs: retryAfterUnixMs)
        }
    }

    /// What to record.
    public enum Outcome: Sendable, Equatable {
        /// 202: accepted.
        case sent
        /// Pending, PUT again not before this (UTC ms); `error` for `last_error`.
        case retry(atMs: Int64, error: String)
        /// No answer was accepted in time: the deadline passed, or the store decided the request first.
        case expired(error: String)
        /// The store refused the answer (a 4xx other than 429): not made again.
        case failed(error: String)
    }

    /// The wait after the `failedAttempts`-th failed PUT (1, 2, 3, …): 5 s, 10 s, 20 s, … 10 min.
    public static func delayMs(afterFailedAttempts failedAttempts: Int) -> Int64 {
        let doublings = max(0, failedAttempts - 1)
        guard doublings < 8 else { return longestDelayMs }  // 5 s × 2^7 is past 10 min
        return min(firstDelayMs << Int64(doublings), longestDelayMs)
    }

    /// The outcome of the `attempt`-th PUT (1, 2, …), answered at `nowMs`, for a request due by `deadlineMs`.
    /// - Parameter appleDecided: Apple's decision on the request arrived while the PUT was under way: a
    ///   failed PUT is not made again (the request expires with its error), as no answer counts any more.
    public static func outcome(
        of result: Result, attempt: Int, nowMs: Int64, deadlineMs: Int64, appleDecided: Bool = false
    ) -> Outcome {
        let error: String
        var retryAtMs = nowMs + delayMs(afterFailedAttempts: attempt)
        switch result {
        case .answered(let status, _, _) where status == 202 || status == 200:
            return .sent
        case .answered(429, let errorCode, let retryAfter):
            error = describe(429, errorCode)
            if let retryAfter, retryAfter > nowMs { retryAtMs = retryAfter }
        case .answered(let status, let errorCode, _) where (400...499).contains(status):
            return .failed(error: describe(status, errorCode))
        case .answered(let status, let errorCode, _):
            error = describe(status, errorCode)
        case .noAnswer(let reason):
            error = reason
        }
        guard retryAtMs < deadlineMs, !appleDecided else { return .expired(error: error) }
        return .retry(atMs: retryAtMs, error: error)
    }

    /// `last_error`: "HTTP 400 errorCode 4000035", or "HTTP 503".
    static func describe(_ status: Int, _ errorCode: Int?) -> String {
        "HTTP \(status)" + (errorCode.map { " errorCode \($0)" } ?? "")
    }
}
