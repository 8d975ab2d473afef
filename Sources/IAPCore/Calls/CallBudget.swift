/// The bookkeeping every conversation with a store shares, whatever it asks (verifyReceipt, the App
/// Store Server API, the Play Developer API): the target asked last, the calls made to each target,
/// and when the budget (`policy.budgetMs`) runs out. The call sequences decide what to ask; this
/// says whether a call may still be made, and records it.
struct CallBudget<Target: Hashable & Sendable>: Sendable {
    let policy: AppleRetryPolicy
    /// Picks each wait within its range (0 to 1, see `AppleRetryPolicy.backoffMs`).
    private let jitter: @Sendable () -> Double
    private let first: Target
    /// The target of the call asked for last (`first` before any call).
    private(set) var target: Target
    /// Calls asked for so far.
    private(set) var callCount = 0
    private var attempts: [Target: Int] = [:]
    private var deadlineMs = 0

    init(policy: AppleRetryPolicy, first: Target, jitter: @escaping @Sendable () -> Double) {
        self.policy = policy
        self.first = first
        self.target = first
        self.jitter = jitter
    }

    /// Starts over at `now`, with the whole budget ahead and no call made.
    mutating func start(atMs now: Int) {
        self = CallBudget(policy: policy, first: first, jitter: jitter)
        deadlineMs = now + policy.budgetMs
    }

    /// What is left of the budget at `now`: the timeout of a call starting then.
    func timeLeftMs(atMs now: Int) -> Int {
        max(deadlineMs - now, 0)
    }

    func attemptsLeft(at target: Target) -> Bool {
        attempts[target, default: 0] < policy.maxAttemptsPerEnvironment
    }

    /// Whether a call starting `waitMs` after `now` would still have the least
    /// time a call needs (`policy.minimumCallMs`).
    func fits(afterMs waitMs: Int, atMs now: Int) -> Bool {
        now + waitMs + policy.minimumCallMs <= deadlineMs
    }

    /// The wait before calling the target asked last again.
    func backoffMs() -> Int {
        backoffMs(afterAttempt: attempts[target, default: 0])
    }

    /// The wait after the `attempt`-th failed call (1-based), counted as the sequence counts them.
    func backoffMs(afterAttempt attempt: Int) -> Int {
        policy.backoffMs(afterAttempt: attempt, jitter: jitter())
    }

    /// Whether the target asked last may be called again after `waitMs`.
    func allowsRetry(afterMs waitMs: Int, atMs now: Int) -> Bool {
        attemptsLeft(at: target) && fits(afterMs: waitMs, atMs: now)
    }

    /// Records a call to `target`.
    mutating func recordCall(to target: Target) {
        self.target = target
        attempts[target, default: 0] += 1
        callCount += 1
    }

    /// Records a call to `target` and asks for it, after `waitMs`.
    mutating func call<Verdict>(_ target: Target, afterMs waitMs: Int) -> CallStep<Target, Verdict> {
        recordCall(to: target)
        return .call(target, afterMs: waitMs)
    }
}
