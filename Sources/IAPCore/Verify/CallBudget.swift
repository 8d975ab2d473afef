/// The bookkeeping every conversation with Apple shares, whatever it asks
/// (verifyReceipt, the App Store Server API): the environment asked last, the
/// calls made in each environment, and when the budget (`policy.budgetMs`)
/// runs out. The call sequences decide what to ask; this says whether a call
/// may still be made, and records it.
struct CallBudget: Sendable {
    let policy: AppleRetryPolicy
    /// Picks each wait within its range (0 to 1, see `AppleRetryPolicy.backoffMs`).
    private let jitter: @Sendable () -> Double
    /// The environment of the call asked for last.
    private(set) var environment: AppleEnvironment = .production
    /// Calls asked for so far.
    private(set) var callCount = 0
    private var attempts: [AppleEnvironment: Int] = [:]
    private var deadlineMs = 0

    init(policy: AppleRetryPolicy, jitter: @escaping @Sendable () -> Double) {
        self.policy = policy
        self.jitter = jitter
    }

    /// Starts over at `now`, with the whole budget ahead and no call made.
    mutating func start(atMs now: Int) {
        self = CallBudget(policy: policy, jitter: jitter)
        deadlineMs = now + policy.budgetMs
    }

    /// What is left of the budget at `now`: the timeout of a call starting then.
    func timeLeftMs(atMs now: Int) -> Int {
        max(deadlineMs - now, 0)
    }

    func attemptsLeft(in environment: AppleEnvironment) -> Bool {
        attempts[environment, default: 0] < policy.maxAttemptsPerEnvironment
    }

    /// Whether a call starting `waitMs` after `now` would still have the least
    /// time a call needs (`policy.minimumCallMs`).
    func fits(afterMs waitMs: Int, atMs now: Int) -> Bool {
        now + waitMs + policy.minimumCallMs <= deadlineMs
    }

    /// The wait before calling the environment asked last again.
    func backoffMs() -> Int {
        policy.backoffMs(afterAttempt: attempts[environment, default: 0], jitter: jitter())
    }

    /// Whether the environment asked last may be called again after `waitMs`.
    func allowsRetry(afterMs waitMs: Int, atMs now: Int) -> Bool {
        attemptsLeft(in: environment) && fits(afterMs: waitMs, atMs: now)
    }

    /// Records a call to `target`.
    mutating func recordCall(to target: AppleEnvironment) {
        environment = target
        attempts[target, default: 0] += 1
        callCount += 1
    }
}
