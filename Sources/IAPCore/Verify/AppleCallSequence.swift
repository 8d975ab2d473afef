/// The conversation with verifyReceipt for one receipt, as a pure state machine:
/// it says which environment to call and when, reads each result, and ends with
/// a verdict. The caller does the I/O:
///
/// ```swift
/// var sequence = AppleCallSequence(policy: policy)
/// var step = sequence.start()
/// while case .call(let environment, let afterMs) = step {
///     sleep(afterMs)
///     step = sequence.next(after: callApple(environment))
/// }
/// ```
///
/// Rules (API.md step 2, DOMAIN.md's status table):
/// - Production first. 21007 from production: the sandbox, at once; 21008 from
///   the sandbox: production, at once. At most `maxEnvironmentSwitches` (2)
///   switches; one more is answered `unavailable`.
/// - 0, and 21006 with a receipt: `valid`.
/// - Passing faults are retried in the same environment after a backoff while
///   that environment has attempts left: 21002, 21005, 21009, 21100-21199 with
///   `is-retryable` true, an HTTP status other than 200, a body that is not a
///   readable answer (a status 0 without a receipt included), a timeout, a
///   connection or TLS failure. When the attempts run out, 21002 is `invalid`,
///   everything else `unavailable`.
/// - 21003, 21010: `invalid` at once. 21000, 21004, 21100-21199 without the flag,
///   a switch to the environment just asked, any status not in the table:
///   `unavailable` at once, since asking again will not change the answer.
///
/// Attempts are counted per environment for the whole sequence, not per visit,
/// so a request makes at most 2 environments x 3 attempts = 6 calls
/// (`AppleRetryPolicy.maxCalls`), however Apple answers.
public struct AppleCallSequence: Sendable {
    public let policy: AppleRetryPolicy
    /// The environment of the call asked for last.
    public private(set) var environment: AppleEnvironment = .production
    /// The status of Apple's most recent readable answer in this sequence, nil
    /// while there was none (Apple not reached). A later unreadable answer or
    /// transport failure does not erase it.
    public private(set) var lastAppleStatus: Int?
    /// Calls asked for so far.
    public private(set) var callCount = 0

    private var attempts: [AppleEnvironment: Int] = [:]
    private var switches = 0
    private var verdict: AppleVerdict?

    public init(policy: AppleRetryPolicy = AppleRetryPolicy()) {
        self.policy = policy
    }

    /// Begins (or begins again) the sequence: call production, now.
    public mutating func start() -> AppleNextStep {
        self = AppleCallSequence(policy: policy)
        return call(.production, afterMs: 0)
    }

    /// The step after the result of the call asked for last. Once the sequence
    /// is finished it keeps answering the same verdict.
    public mutating func next(after result: AppleCallResult) -> AppleNextStep {
        if let verdict { return .finished(verdict) }
        guard let reply = Self.reply(from: result) else {
            return retry(orElse: .unavailable(appleStatus: lastAppleStatus))
        }
        lastAppleStatus = reply.status
        switch reply.appleStatus.action(isRetryable: reply.isRetryable) {
        case .accept:
            guard reply.receipt != nil else {
                return retry(orElse: .unavailable(appleStatus: reply.status))
            }
            return finish(.valid(reply, environment: environment))
        case .sendTo(let target):
            guard target != environment, switches < policy.maxEnvironmentSwitches,
                  attemptsLeft(in: target)
            else { return finish(.unavailable(appleStatus: reply.status)) }
            switches += 1
            return call(target, afterMs: 0)
        case .retryThenInvalid:
            return retry(orElse: .invalid(appleStatus: reply.status))
        case .retryThenUnavailable:
            return retry(orElse: .unavailable(appleStatus: reply.status))
        case .invalid:
            return finish(.invalid(appleStatus: reply.status))
        case .unavailable:
            return finish(.unavailable(appleStatus: reply.status))
        }
    }

    /// Apple's answer, when the call brought a readable one.
    private static func reply(from result: AppleCallResult) -> AppleReply? {
        guard case .answered(let httpStatus, let body) = result, httpStatus == 200,
              let json = try? JSONParser.parse(body)
        else { return nil }
        return try? AppleReply.parse(json)
    }

    private func attemptsLeft(in environment: AppleEnvironment) -> Bool {
        attempts[environment, default: 0] < policy.maxAttemptsPerEnvironment
    }

    /// Calls the same environment again after the backoff, or ends with `exhausted`.
    private mutating func retry(orElse exhausted: AppleVerdict) -> AppleNextStep {
        guard attemptsLeft(in: environment) else { return finish(exhausted) }
        return call(environment, afterMs: policy.backoffMs(afterAttempt: attempts[environment, default: 0]))
    }

    private mutating func call(_ target: AppleEnvironment, afterMs: Int) -> AppleNextStep {
        environment = target
        attempts[target, default: 0] += 1
        callCount += 1
        return .call(target, afterMs: afterMs)
    }

    private mutating func finish(_ verdict: AppleVerdict) -> AppleNextStep {
        self.verdict = verdict
        return .finished(verdict)
    }
}
