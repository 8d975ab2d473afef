/// The conversation with verifyReceipt for one receipt, as a pure state machine:
/// it says which environment to call and when, reads each result, and ends with
/// a verdict. The caller does the I/O:
///
/// ```swift
/// var sequence = AppleCallSequence(policy: policy)
/// var step = sequence.start(atMs: now())
/// while case .call(let environment, let afterMs) = step {
///     sleep(afterMs)
///     let result = callApple(environment, timeoutMs: sequence.timeLeftMs(atMs: now()))
///     step = sequence.next(after: result, atMs: now())
/// }
/// ```
///
/// Times are milliseconds on a monotonic clock of the caller's choice.
///
/// Rules (docs/api.md "POST /v1/receipts/verify" step 2; docs/apple.md "Statuses"):
/// - Production first. 21007 from production: the sandbox, at once; 21008 from
///   the sandbox: production, at once. At most `maxEnvironmentSwitches` (2)
///   switches; one more is answered `unavailable`.
/// - 0, and 21006 with a receipt: `valid`.
/// - Passing faults are retried in the same environment after a backoff while
///   that environment has attempts left: 21002, 21005, 21009, 21100-21199 with
///   `is-retryable` true, an HTTP status other than 200, a body that is not a
///   readable answer (a status 0 without a receipt included), a timeout, a
///   connection or TLS failure. When the attempts or the budget run out, 21002
///   is `invalid` (answered `not_paid`), everything else `unavailable`. The
///   retries are spread over the budget so that a passing fault of Apple's,
///   which answers 21002 as a malformed receipt does, is outlived.
/// - No call, retry or switch, when less than `policy.minimumCallMs` of the
///   budget would be left when it starts (`AppleRetryPolicy`).
/// - 21003, 21010: `invalid` at once. 21000, 21004, 21100-21199 without the flag,
///   a switch to the environment just asked, any status not in the table:
///   `unavailable` at once, since asking again will not change the answer.
///
/// Attempts are counted per environment for the whole sequence, not per visit,
/// so a request makes at most 2 environments x 3 attempts = 6 calls
/// (`AppleRetryPolicy.maxCalls`), however Apple answers.
public struct AppleCallSequence: CallSequence {
    public typealias Step = CallStep<AppleEnvironment, AppleVerdict>

    public var policy: AppleRetryPolicy { budget.policy }
    /// The environment of the call asked for last.
    public var environment: AppleEnvironment { budget.target }
    /// The status of Apple's most recent readable answer in this sequence, nil
    /// while there was none (Apple not reached). A later unreadable answer or
    /// transport failure does not erase it.
    public private(set) var lastAppleStatus: Int?
    /// Calls asked for so far.
    public var callCount: Int { budget.callCount }

    private var budget: CallBudget<AppleEnvironment>
    private var switches = 0
    private var verdict: AppleVerdict?

    public init(
        policy: AppleRetryPolicy = AppleRetryPolicy(),
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        budget = CallBudget(policy: policy, first: .production, jitter: jitter)
    }

    /// Begins (or begins again) the sequence at `now`: call production, now.
    public mutating func start(atMs now: Int) -> Step {
        lastAppleStatus = nil
        switches = 0
        verdict = nil
        budget.start(atMs: now)
        return budget.call(.production, afterMs: 0)
    }

    /// What is left of the budget at `now`: the timeout of a call starting then.
    public func timeLeftMs(atMs now: Int) -> Int {
        budget.timeLeftMs(atMs: now)
    }

    /// The step after the result of the call asked for last, which came at
    /// `now`. Once the sequence is finished it keeps answering the same verdict.
    public mutating func next(after result: AppleCallResult, atMs now: Int) -> Step {
        if let verdict { return .finished(verdict) }
        guard let reply = Self.reply(from: result) else {
            return retry(orElse: .unavailable(appleStatus: lastAppleStatus), atMs: now)
        }
        lastAppleStatus = reply.status
        switch reply.appleStatus.action(isRetryable: reply.isRetryable) {
        case .accept:
            guard reply.receipt != nil else {
                return retry(orElse: .unavailable(appleStatus: reply.status), atMs: now)
            }
            return finish(.valid(reply, environment: environment))
        case .sendTo(let target):
            guard target != environment, switches < policy.maxEnvironmentSwitches,
                  budget.attemptsLeft(at: target), budget.fits(afterMs: 0, atMs: now)
            else { return finish(.unavailable(appleStatus: reply.status)) }
            switches += 1
            return budget.call(target, afterMs: 0)
        case .retryThenInvalid:
            return retry(orElse: .invalid(appleStatus: reply.status), atMs: now)
        case .retryThenUnavailable:
            return retry(orElse: .unavailable(appleStatus: reply.status), atMs: now)
        case .invalid:
            return finish(.invalid(appleStatus: reply.status))
        case .unavailable:
            return finish(.unavailable(appleStatus: reply.status))
        }
    }

    /// Stopped by the caller's deadline: `unavailable`, with Apple's last status if one came.
    public var verdictWhenStopped: AppleVerdict { .unavailable(appleStatus: lastAppleStatus) }

    /// Apple's answer, when the call brought a readable one.
    private static func reply(from result: AppleCallResult) -> AppleReply? {
        guard case .answered(let httpStatus, let body) = result, httpStatus == 200,
              let json = try? JSONParser.parse(body)
        else { return nil }
        return try? AppleReply.parse(json)
    }

    /// Calls the same environment again after the backoff, or ends with
    /// `exhausted` when it has no attempts left or the budget would be too short.
    private mutating func retry(orElse exhausted: AppleVerdict, atMs now: Int) -> Step {
        guard budget.attemptsLeft(at: environment) else { return finish(exhausted) }
        let wait = budget.backoffMs()
        guard budget.fits(afterMs: wait, atMs: now) else { return finish(exhausted) }
        return budget.call(environment, afterMs: wait)
    }

    private mutating func finish(_ verdict: AppleVerdict) -> Step {
        self.verdict = verdict
        return .finished(verdict)
    }
}
