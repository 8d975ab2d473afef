/// How often and how patiently the service asks Apple about one receipt (see
/// `AppleCallSequence`), for a budget B (`IAP_APPLE_TIMEOUT_MS`, 15 s by default):
///
/// - The whole conversation (every call, every wait, the switches between
///   production and the sandbox) ends within B of its first call; each call's
///   own timeout is what is left of B. A client gets its answer in B, not in
///   several calls' worth of timeouts.
/// - At most 3 calls per environment and 2 switches: 6 calls at most, whatever
///   Apple answers. These are the calls that reach Apple: the transport must
///   not add any of its own (`CurlTransfer` refuses libcurl's re-sends).
/// - After a passing fault, the next call to that environment waits: after the
///   first failed call between B/16 and B/8, after the second between 3B/16 and
///   3B/8 (B = 15 s: 0.94-1.9 s, then 2.8-5.6 s; B = 2 s: 125-250 ms, then
///   375-750 ms). A fault of Apple's lasting seconds is outlived, and the
///   jitter keeps the requests that failed together from retrying together.
/// - No call starts with less than B/4 left: Apple could hardly answer in time.
public struct AppleRetryPolicy: Equatable, Sendable {
    /// The conversation's budget, in milliseconds.
    public var budgetMs: Int
    /// Calls to one environment per request, the first one included. Default 3.
    public var maxAttemptsPerEnvironment: Int
    /// Moves between production and the sandbox (21007, 21008) per request. Default 2.
    public var maxEnvironmentSwitches: Int

    /// Each wait's ceiling is this many times the one before.
    static let backoffFactor = 3

    public init(budgetMs: Int = 15_000, maxAttemptsPerEnvironment: Int = 3, maxEnvironmentSwitches: Int = 2) {
        self.budgetMs = budgetMs
        self.maxAttemptsPerEnvironment = maxAttemptsPerEnvironment
        self.maxEnvironmentSwitches = maxEnvironmentSwitches
    }

    /// The wait, in milliseconds, after the `attempt`-th call (1-based) to an
    /// environment failed and before the next one. Its ceiling is B/8 after the
    /// first call and 3 times the one before after each further call; `jitter`
    /// (0 to 1) picks the wait between half the ceiling (0) and the ceiling (1).
    public func backoffMs(afterAttempt attempt: Int, jitter: Double) -> Int {
        var ceiling = budgetMs / 8
        for _ in 1..<max(attempt, 1) {
            ceiling = min(ceiling * Self.backoffFactor, budgetMs)
        }
        let spread = ceiling - ceiling / 2
        return ceiling - Int(Double(spread) * (1 - min(max(jitter, 0), 1)))
    }

    /// No call starts with less of the budget left than this.
    public var minimumCallMs: Int { budgetMs / 4 }

    /// The most calls one request can make: every environment's attempts. Switches
    /// do not add to it, since attempts are counted per environment, not per visit.
    public var maxCalls: Int {
        maxAttemptsPerEnvironment * AppleEnvironment.allCases.count
    }
}
