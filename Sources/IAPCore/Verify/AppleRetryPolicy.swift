/// How often and how patiently the service asks Apple (see `AppleCallSequence`).
public struct AppleRetryPolicy: Equatable, Sendable {
    /// Calls to one environment per request, the first one included. Default 3.
    public var maxAttemptsPerEnvironment: Int
    /// Moves between production and the sandbox (21007, 21008) per request. Default 2.
    public var maxEnvironmentSwitches: Int
    /// Wait before the second call to an environment, in milliseconds. Default 100.
    public var firstBackoffMs: Int
    /// Each further wait is this many times the one before. Default 3 (100, 300, 900 ms...).
    public var backoffFactor: Int
    /// No wait is longer than this, in milliseconds. Default 2000.
    public var maxBackoffMs: Int

    public init(
        maxAttemptsPerEnvironment: Int = 3, maxEnvironmentSwitches: Int = 2,
        firstBackoffMs: Int = 100, backoffFactor: Int = 3, maxBackoffMs: Int = 2000
    ) {
        self.maxAttemptsPerEnvironment = maxAttemptsPerEnvironment
        self.maxEnvironmentSwitches = maxEnvironmentSwitches
        self.firstBackoffMs = firstBackoffMs
        self.backoffFactor = backoffFactor
        self.maxBackoffMs = maxBackoffMs
    }

    /// The wait, in milliseconds, after the `attempt`-th call (1-based) to an
    /// environment failed and before the next one: 100 after the first, 300
    /// after the second with the defaults.
    public func backoffMs(afterAttempt attempt: Int) -> Int {
        var wait = firstBackoffMs
        for _ in 1..<max(attempt, 1) {
            wait = min(wait * backoffFactor, maxBackoffMs)
        }
        return min(wait, maxBackoffMs)
    }

    /// The most calls one request can make: every environment's attempts. Switches
    /// do not add to it, since attempts are counted per environment, not per visit.
    public var maxCalls: Int {
        maxAttemptsPerEnvironment * AppleEnvironment.allCases.count
    }
}
