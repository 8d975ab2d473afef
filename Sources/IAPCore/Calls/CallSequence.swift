/// A conversation with a store as a pure state machine: it says what to call and when, reads each
/// call's result, and ends with a verdict. The caller does the I/O (`CallConversation` in the
/// service, on `AppleClient`'s thread):
///
/// ```swift
/// var step = sequence.start(atMs: now())
/// while case .call(let target, let afterMs) = step {
///     sleep(afterMs)
///     let result = call(target, timeoutMs: sequence.timeLeftMs(atMs: now()))
///     step = sequence.next(after: result, atMs: now())
/// }
/// ```
///
/// Times are milliseconds on a monotonic clock of the caller's choice. The sequences keep their
/// calls, waits and deadline in a `CallBudget`.
public protocol CallSequence: Sendable {
    /// Where a call goes: an `AppleEnvironment`, or Google's token endpoint or API.
    associatedtype Target: Sendable
    /// What one call brought, as the sequence reads it.
    associatedtype Result
    /// How the conversation ended.
    associatedtype Verdict: Sendable

    /// Begins the sequence at `now`: its first call.
    mutating func start(atMs now: Int) -> CallStep<Target, Verdict>
    /// What is left of the budget at `now`: the timeout of a call starting then.
    func timeLeftMs(atMs now: Int) -> Int
    /// The step after the result of the call asked for last, which came at `now`.
    mutating func next(after result: Result, atMs now: Int) -> CallStep<Target, Verdict>
    /// The verdict when the caller's deadline stops the sequence before it finished.
    var verdictWhenStopped: Verdict { get }
}
