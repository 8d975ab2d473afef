/// One conversation with Google's Play Developer API as a pure state machine,
/// like `ServerAPICallSequence` for Apple: it says what to send next (an access
/// token from the key's `token_uri`, or the API call) and when, reads each
/// result, and ends with a verdict. The caller does the I/O and keeps the
/// shared token (`GoogleAccessTokenCache`); times are its monotonic milliseconds.
/// Its calls and deadline are kept in a `CallBudget`, like Apple's.
///
/// Rules:
/// - No usable token: the token first. A token endpoint that refuses the grant
///   (a 4xx): `unauthorized`.
/// - The API's 2xx and its 4xx other than those below: `answered`, for the
///   caller to read (consume's 400 `invalidPurchaseState` says something).
/// - 401 from the API: a new token and the call once more; a second 401 is `unauthorized`.
/// - 404 or 410: `notFound` (a token Google does not know proves nothing).
/// - 429: called again after `Retry-After` (Google gives seconds) or the backoff;
///   5xx, a timeout, a connection or TLS failure: after the backoff. Within the
///   budget (`policy.budgetMs`) and at most `maxCalls` calls in all, else `unavailable`.
public struct GoogleCallSequence: CallSequence {
    public typealias Step = CallStep<GoogleCallTarget, GoogleCallVerdict>

    /// What one HTTP exchange brought.
    public enum Result: Equatable, Sendable {
        /// `retryAfterSeconds`: the answer's `Retry-After`, when it had one.
        case answered(httpStatus: Int, body: [UInt8], retryAfterSeconds: Int64?)
        case transportFailure(AppleCallResult.TransportFailure)
        /// The token endpoint answered 200 without an access token the caller could read and cache.
        case unreadableToken
    }

    /// Calls of every kind one conversation makes at most (tokens included).
    public static let maxCalls = 6

    public var policy: AppleRetryPolicy { budget.policy }
    /// Whether the shared cache holds a usable token, asked when the sequence starts.
    private let hasToken: @Sendable () -> Bool
    private var budget: CallBudget<GoogleCallTarget>
    private var failures = 0
    private var refreshed = false

    public init(
        policy: AppleRetryPolicy, hasToken: @escaping @Sendable () -> Bool,
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        self.hasToken = hasToken
        budget = CallBudget(policy: policy, first: .api, jitter: jitter)
    }

    /// Begins at `now`: the API call when the cache holds a usable token, else the token first.
    public mutating func start(atMs now: Int) -> Step {
        budget.start(atMs: now)
        failures = 0
        refreshed = false
        return budget.call(hasToken() ? .api : .token, afterMs: 0)
    }

    public func timeLeftMs(atMs now: Int) -> Int { budget.timeLeftMs(atMs: now) }

    /// Stopped by the caller's deadline: `unavailable`.
    public var verdictWhenStopped: GoogleCallVerdict { .unavailable }

    /// The step after the result of the call asked for last: a token request's or the API call's.
    public mutating func next(after result: Result, atMs now: Int) -> Step {
        budget.target == .token ? next(afterToken: result, atMs: now) : next(afterCall: result, atMs: now)
    }

    private mutating func next(afterToken result: Result, atMs now: Int) -> Step {
        switch result {
        case .answered(200, _, _):
            return budget.call(.api, afterMs: 0)
        case .unreadableToken:
            return .finished(.unavailable)
        case .answered(429, _, let retryAfter):
            return retry(afterMs: wait(retryAfter), atMs: now)
        case .answered(let status, _, _) where status >= 500:
            return retry(afterMs: backoff(), atMs: now)
        case .answered:
            return .finished(.unauthorized)
        case .transportFailure:
            return retry(afterMs: backoff(), atMs: now)
        }
    }

    private mutating func next(afterCall result: Result, atMs now: Int) -> Step {
        switch result {
        case .answered(401, _, _):
            guard !refreshed else { return .finished(.unauthorized) }
            refreshed = true
            guard budget.callCount < Self.maxCalls, budget.fits(afterMs: 0, atMs: now) else {
                return .finished(.unavailable)
            }
            return budget.call(.token, afterMs: 0)
        case .answered(404, _, _), .answered(410, _, _):
            return .finished(.notFound)
        case .answered(429, _, let retryAfter):
            return retry(afterMs: wait(retryAfter), atMs: now)
        case .answered(let status, _, _) where status >= 500:
            return retry(afterMs: backoff(), atMs: now)
        case .answered(let status, let body, _):
            return .finished(.answered(httpStatus: status, body: body))
        case .transportFailure, .unreadableToken:
            return retry(afterMs: backoff(), atMs: now)
        }
    }

    private func wait(_ retryAfterSeconds: Int64?) -> Int {
        retryAfterSeconds.map { Int(clamping: max($0, 0) * 1000) } ?? backoff()
    }

    private func backoff() -> Int {
        budget.backoffMs(afterAttempt: failures + 1)
    }

    /// The call asked for last once more, after `wait`, when the calls and the budget allow it.
    private mutating func retry(afterMs wait: Int, atMs now: Int) -> Step {
        failures += 1
        guard budget.callCount < Self.maxCalls, budget.fits(afterMs: wait, atMs: now) else {
            return .finished(.unavailable)
        }
        return budget.call(budget.target, afterMs: wait)
    }
}

/// Where a call of a `GoogleCallSequence` goes.
public enum GoogleCallTarget: Hashable, Sendable {
    /// The key's `token_uri`, for an access token.
    case token
    /// The Play Developer API, with the cached token.
    case api
}

/// How a conversation with the Play Developer API ended.
public enum GoogleCallVerdict: Equatable, Sendable {
    /// The API answered a 2xx or a 4xx that says something: status and body, not yet read.
    case answered(httpStatus: Int, body: [UInt8])
    /// 404 or 410: Google does not know it; it proves nothing.
    case notFound
    /// The grant was refused, or the API refused a fresh token too: a configuration error.
    case unauthorized
    /// Google unreachable, failing or rate-limiting past the budget.
    case unavailable
}
