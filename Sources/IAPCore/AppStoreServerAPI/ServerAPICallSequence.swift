/// One conversation with the App Store Server API (Get Transaction Info, Look
/// Up Order ID) as a pure state machine, like `AppleCallSequence` for
/// verifyReceipt: it says which environment to call and when, reads each
/// result, and ends with a verdict. The caller does the I/O; times are
/// milliseconds on its monotonic clock, except `Retry-After`, which Apple gives
/// on the wall clock and the caller's `wallClockMs` converts.
///
/// Rules (docs/apple.md "The App Store Server API"):
/// - Production first. `4040010` (or 404) from production: the sandbox at once,
///   when `sandboxFallback` (Look Up Order ID is production only); from the
///   sandbox, or without the fallback: `notFound`. A 400 (an id Apple refuses) is `notFound`.
/// - 200: `answered`, the body for the caller to read and verify.
/// - 401: `unauthorized` at once (a bad token or key: asking again will not help).
/// - 429: called again once `Retry-After` has passed (or after the backoff
///   when it has none, or one that is not a UNIX time in ms); when that moment leaves less than
///   `policy.minimumCallMs` of the budget, `unavailable` at once.
/// - 5xx, any other status, a timeout, a connection or TLS failure: retried in
///   the same environment after `policy.backoffMs` while it has attempts left
///   and the budget allows, else `unavailable`.
/// - With `answersRefusals`, any 4xx but 401 and 429 is `refused` at once, with its status and body
///   for the caller to read (a subscription extension Apple declines is a 400 or 403, not a fault);
///   no sandbox fallback then.
/// - At most `policy.maxAttemptsPerEnvironment` calls per environment, 429s included.
public struct ServerAPICallSequence: CallSequence {
    public typealias Step = CallStep<AppleEnvironment, ServerAPIVerdict>

    /// A call's result with the moment it came on the wall clock, which a `Retry-After` is read against.
    public struct Received: Sendable {
        public let result: ServerAPICallResult
        /// UNIX milliseconds.
        public let wallClockMs: Int64

        public init(_ result: ServerAPICallResult, wallClockMs: Int64) {
            self.result = result
            self.wallClockMs = wallClockMs
        }
    }

    /// Apple's errorCode for "transaction id not found".
    public static let transactionIDNotFound = 4_040_010
    /// A `Retry-After` below this (2001-09-09 in ms) is not Apple's UNIX time in
    /// milliseconds (seconds, say): it counts as absent, and the backoff applies.
    static let earliestRetryAfterMs: Int64 = 1_000_000_000_000

    public var policy: AppleRetryPolicy { budget.policy }
    public let sandboxFallback: Bool
    /// A 4xx other than 401 and 429 is Apple's answer, `refused`, not a fault or `notFound`.
    public let answersRefusals: Bool
    /// The environment called first: production, except for a question about
    /// the sandbox alone (Get Notification History of sandbox notifications).
    public let firstEnvironment: AppleEnvironment
    /// The environment of the call asked for last.
    public var environment: AppleEnvironment { budget.target }
    /// Calls asked for so far.
    public var callCount: Int { budget.callCount }
    /// The HTTP status of the last answer, nil while none came.
    public private(set) var lastHTTPStatus: Int?

    private var budget: CallBudget<AppleEnvironment>
    private var verdict: ServerAPIVerdict?

    public init(
        policy: AppleRetryPolicy, sandboxFallback: Bool, firstEnvironment: AppleEnvironment = .production,
        answersRefusals: Bool = false, jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        self.sandboxFallback = sandboxFallback
        self.answersRefusals = answersRefusals
        self.firstEnvironment = firstEnvironment
        budget = CallBudget(policy: policy, first: .production, jitter: jitter)
    }

    /// Begins the sequence at `now`: call the first environment (production), now.
    public mutating func start(atMs now: Int) -> Step {
        lastHTTPStatus = nil
        verdict = nil
        budget.start(atMs: now)
        return budget.call(firstEnvironment, afterMs: 0)
    }

    /// What is left of the budget at `now`: the timeout of a call starting then.
    public func timeLeftMs(atMs now: Int) -> Int {
        budget.timeLeftMs(atMs: now)
    }

    /// The step after the result of the call asked for last, which came at
    /// `now` (monotonic) and `wallClockMs` (UNIX milliseconds).
    public mutating func next(after result: ServerAPICallResult, atMs now: Int, wallClockMs: Int64) -> Step {
        if let verdict { return .finished(verdict) }
        guard case .answered(let httpStatus, let body, let retryAfter) = result else {
            return retry(afterMs: budget.backoffMs(), atMs: now)
        }
        lastHTTPStatus = httpStatus
        switch httpStatus {
        case 200:
            return finish(.answered(body: body, environment: environment))
        case 401:
            return finish(.unauthorized)
        case 400..<500 where answersRefusals && httpStatus != 429:
            return finish(.refused(httpStatus: httpStatus, body: body))
        case 404 where Self.errorCode(body) == Self.transactionIDNotFound || Self.errorCode(body) == nil:
            guard environment == .production, sandboxFallback, budget.fits(afterMs: 0, atMs: now) else {
                return finish(environment == .production && sandboxFallback ? .unavailable : .notFound)
            }
            return budget.call(.sandbox, afterMs: 0)
        case 400, 404:
            return finish(.notFound)
        case 429:
            let waitMs = retryAfter.flatMap { $0 >= Self.earliestRetryAfterMs ? $0 : nil }
                .map { Int(clamping: max($0 - wallClockMs, 0)) } ?? budget.backoffMs()
            return retry(afterMs: waitMs, atMs: now)
        default:
            return retry(afterMs: budget.backoffMs(), atMs: now)
        }
    }

    /// The step after `received`, the result of the call asked for last, which came at `now`.
    public mutating func next(after received: Received, atMs now: Int) -> Step {
        next(after: received.result, atMs: now, wallClockMs: received.wallClockMs)
    }

    /// Stopped by the caller's deadline: `unavailable`.
    public var verdictWhenStopped: ServerAPIVerdict { .unavailable }

    /// Apple's `errorCode` in an error body, when it has one.
    static func errorCode(_ body: [UInt8]) -> Int? {
        guard let json = try? JSONParser.parse(body), case .number(let text)? = json.objectValue?["errorCode"]
        else { return nil }
        return Int(text)
    }

    /// Calls the same environment again after `afterMs`, or ends `unavailable`
    /// when it has no attempts left or the budget would be too short.
    private mutating func retry(afterMs wait: Int, atMs now: Int) -> Step {
        guard budget.allowsRetry(afterMs: wait, atMs: now) else { return finish(.unavailable) }
        return budget.call(environment, afterMs: wait)
    }

    private mutating func finish(_ verdict: ServerAPIVerdict) -> Step {
        self.verdict = verdict
        return .finished(verdict)
    }
}
