/// Exactly one call to one environment, whose result is the verdict as it came: for the calls whose
/// retries the caller keeps in the database, so that they outlive the process (Finish Transaction,
/// Send Consumption Information). The call may take at most `budgetMs`.
public struct SingleCallSequence<Verdict: Sendable>: CallSequence {
    public let environment: AppleEnvironment
    public let verdictWhenStopped: Verdict
    private var budget: CallBudget<AppleEnvironment>

    /// `verdictWhenStopped`: what the caller gets when its deadline ends the call before a result came.
    public init(environment: AppleEnvironment, budgetMs: Int, verdictWhenStopped: Verdict) {
        self.environment = environment
        self.verdictWhenStopped = verdictWhenStopped
        budget = CallBudget(policy: AppleRetryPolicy(budgetMs: budgetMs), first: environment, jitter: { 1 })
    }

    public mutating func start(atMs now: Int) -> CallStep<AppleEnvironment, Verdict> {
        budget.start(atMs: now)
        return budget.call(environment, afterMs: 0)
    }

    public func timeLeftMs(atMs now: Int) -> Int {
        budget.timeLeftMs(atMs: now)
    }

    public mutating func next(after result: Verdict, atMs now: Int) -> CallStep<AppleEnvironment, Verdict> {
        .finished(result)
    }
}
