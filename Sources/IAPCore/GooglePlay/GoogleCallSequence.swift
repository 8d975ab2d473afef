/// One conversation with Google's Play Developer API as a pure state machine,
/// like `ServerAPICallSequence` for Apple: it says what to send next (an access
/// token from the key's `token_uri`, or the API call) and when, reads each
/// result, and ends with a verdict. The caller does the I/O and keeps the
/// shared token (`GoogleAccessTokenCache`); times are its monotonic milliseconds.
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
public struct GoogleCallSequence: Sendable {
    public enum Step: Equatable, Sendable {
        /// Ask `token_uri` for an access token after `afterMs`.
        case fetchToken(afterMs: Int)
        /// Make the API call, with the cached token, after `afterMs`.
        case call(afterMs: Int)
        case finished(GoogleCallVerdict)
    }

    /// What one HTTP exchange brought.
    public enum Result: Equatable, Sendable {
        /// `retryAfterSeconds`: the answer's `Retry-After`, when it had one.
        case answered(httpStatus: Int, body: [UInt8], retryAfterSeconds: Int64?)
        case transportFailure(AppleCallResult.TransportFailure)
    }

    /// Calls of every kind one conversation makes at most (tokens included).
    public static let maxCalls = 6

    public let policy: AppleRetryPolicy
    private let jitter: @Sendable () -> Double
    private var deadlineMs = 0
    private var calls = 0
    private var failures = 0
    private var refreshed = false
    /// Whether the call asked for last is a token request.
    public private(set) var askingToken = false

    public init(policy: AppleRetryPolicy, jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }) {
        self.policy = policy
        self.jitter = jitter
    }

    /// Begins at `now`; `hasToken`: the cache holds a usable one.
    public mutating func start(atMs now: Int, hasToken: Bool) -> Step {
        deadlineMs = now + policy.budgetMs
        return hasToken ? call(afterMs: 0) : fetchToken(afterMs: 0)
    }

    public func timeLeftMs(atMs now: Int) -> Int { max(deadlineMs - now, 0) }

    /// The step after a token request's result. `tokenStored`: a 200 whose
    /// token the caller read and cached (false: unreadable, `unavailable`).
    public mutating func next(afterToken result: Result, tokenStored: Bool, atMs now: Int) -> Step {
        switch result {
        case .answered(200, _, _):
            return tokenStored ? call(afterMs: 0) : .finished(.unavailable)
        case .answered(429, _, let retryAfter):
            return retry(afterMs: wait(retryAfter), atMs: now, fetchingToken: true)
        case .answered(let status, _, _) where status >= 500:
            return retry(afterMs: backoff(), atMs: now, fetchingToken: true)
        case .answered:
            return .finished(.unauthorized)
        case .transportFailure:
            return retry(afterMs: backoff(), atMs: now, fetchingToken: true)
        }
    }

    /// The step after the API call's result.
    public mutating func next(afterCall result: Result, atMs now: Int) -> Step {
        switch result {
        case .answered(401, _, _):
            guard !refreshed else { return .finished(.unauthorized) }
            refreshed = true
            return fetchToken(afterMs: 0, atMs: now)
        case .answered(404, _, _), .answered(410, _, _):
            return .finished(.notFound)
        case .answered(429, _, let retryAfter):
            return retry(afterMs: wait(retryAfter), atMs: now, fetchingToken: false)
        case .answered(let status, _, _) where status >= 500:
            return retry(afterMs: backoff(), atMs: now, fetchingToken: false)
        case .answered(let status, let body, _):
            return .finished(.answered(httpStatus: status, body: body))
        case .transportFailure:
            return retry(afterMs: backoff(), atMs: now, fetchingToken: false)
        }
    }

    private func wait(_ retryAfterSeconds: Int64?) -> Int {
        retryAfterSeconds.map { Int(clamping: max($0, 0) * 1000) } ?? backoff()
    }

    private func backoff() -> Int {
        policy.backoffMs(afterAttempt: failures + 1, jitter: jitter())
    }

    private mutating func retry(afterMs wait: Int, atMs now: Int, fetchingToken: Bool) -> Step {
        failures += 1
        guard calls < Self.maxCalls, now + wait + policy.minimumCallMs <= deadlineMs else {
            return .finished(.unavailable)
        }
        return fetchingToken ? fetchToken(afterMs: wait) : call(afterMs: wait)
    }

    private mutating func fetchToken(afterMs wait: Int, atMs now: Int? = nil) -> Step {
        if let now, calls >= Self.maxCalls || now + policy.minimumCallMs > deadlineMs { return .finished(.unavailable) }
        calls += 1
        askingToken = true
        return .fetchToken(afterMs: wait)
    }

    private mutating func call(afterMs wait: Int) -> Step {
        calls += 1
        askingToken = false
        return .call(afterMs: wait)
    }
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
