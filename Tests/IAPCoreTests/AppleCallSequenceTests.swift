import IAPCore
import XCTest

final class AppleCallSequenceTests: XCTestCase {
    // MARK: - Helpers

    /// One call the sequence asked for.
    private struct Call: Equatable, CustomStringConvertible {
        let environment: AppleEnvironment
        let afterMs: Int
        var description: String { "\(environment.rawValue)+\(afterMs)ms" }
    }

    private static let production0 = Call(environment: .production, afterMs: 0)
    private static let sandbox0 = Call(environment: .sandbox, afterMs: 0)

    /// Drives a sequence with scripted results, one per call asked for, each
    /// taking `callMs` on a simulated clock that starts at 1000; fails when the
    /// sequence asks for more calls than the script has, or fewer. `jitter` 1:
    /// every wait is its ceiling.
    private func run(
        _ script: [AppleCallResult], policy: AppleRetryPolicy = AppleRetryPolicy(), jitter: Double = 1,
        callMs: Int = 0, file: StaticString = #filePath, line: UInt = #line
    ) -> (calls: [Call], verdict: AppleVerdict?, sequence: AppleCallSequence) {
        var sequence = AppleCallSequence(policy: policy, jitter: { jitter })
        var calls: [Call] = []
        var now = 1000
        var step = sequence.start(atMs: now)
        var remaining = script[...]
        while case .call(let environment, let afterMs) = step {
            calls.append(Call(environment: environment, afterMs: afterMs))
            guard let result = remaining.popFirst() else {
                XCTFail("asked for call \(calls.count), the script has \(script.count)", file: file, line: line)
                return (calls, nil, sequence)
            }
            now += afterMs + callMs
            step = sequence.next(after: result, atMs: now)
        }
        XCTAssertTrue(remaining.isEmpty, "finished with \(remaining.count) scripted results unused", file: file, line: line)
        guard case .finished(let verdict) = step else { return (calls, nil, sequence) }
        XCTAssertEqual(sequence.callCount, calls.count, file: file, line: line)
        return (calls, verdict, sequence)
    }

    private func answer(_ text: String, http: Int = 200) -> AppleCallResult {
        .answered(httpStatus: http, body: Array(text.utf8))
    }

    private func status(_ code: Int, _ extra: String = "") -> AppleCallResult {
        answer(#"{"status": \#(code)\#(extra)}"#)
    }

    private let validProduction = MadeUpAnswers.productionOnePurchase
    private let validSandbox = MadeUpAnswers.sandboxOnePurchase

    private func isValid(_ verdict: AppleVerdict?, in environment: AppleEnvironment) -> Bool {
        guard case .valid(let reply, let foundIn)? = verdict else { return false }
        return foundIn == environment && reply.receipt != nil
    }

    // MARK: - Valid answers

    func testValidAtOnceIsOneCallToProduction() {
        let run = run([answer(validProduction)])

        XCTAssertEqual(run.calls, [Self.production0])
        XCTAssertEqual(run.verdict, .valid(AppleFixtures.reply(validProduction), environment: .production))
        XCTAssertEqual(run.sequence.lastAppleStatus, 0)
        XCTAssertEqual(run.sequence.environment, .production)
    }

    func testExpiredSubscriptionWithReceiptIsValid() {
        let body = #"{"status": 21006, "receipt": {"bid": "com.example.game", "bvrs": "1.0", "transaction_id": "1", "product_id": "p"}}"#
        let run = run([answer(body)])

        XCTAssertEqual(run.calls.count, 1)
        XCTAssertTrue(isValid(run.verdict, in: .production))
    }

    func testStatusZeroWithoutReceiptIsAnUnreadableAnswer() {
        let run = run([status(0), status(0), status(0)])

        XCTAssertEqual(run.calls.count, 3)
        XCTAssertEqual(run.verdict, .unavailable(appleStatus: 0))
    }

    func testSeedAnswersAreValid() {
        XCTAssertTrue(isValid(run([answer(SeedAnswers.ios6TransactionReceipt)]).verdict, in: .production))
        let sandboxRun = run([answer(SeedAnswers.sandboxReceiptSentToProduction), answer(SeedAnswers.ios7AppReceiptOnePurchase)])
        XCTAssertEqual(sandboxRun.calls, [Self.production0, Self.sandbox0])
        XCTAssertTrue(isValid(sandboxRun.verdict, in: .sandbox))
    }

    // MARK: - Environment switches

    func testSandboxReceiptGoesToTheSandboxAtOnce() {
        let run = run([status(21007), answer(validSandbox)])

        XCTAssertEqual(run.calls, [Self.production0, Self.sandbox0])
        XCTAssertTrue(isValid(run.verdict, in: .sandbox))
        XCTAssertEqual(run.sequence.environment, .sandbox)
    }

    func testProductionReceiptFromTheSandboxGoesBackToProduction() {
        let run = run([status(21007), status(21008), answer(validProduction)])

        XCTAssertEqual(run.calls, [Self.production0, Self.sandbox0, Self.production0])
        XCTAssertTrue(isValid(run.verdict, in: .production))
    }

    func testAThirdSwitchIsRefused() {
        let run = run([status(21007), status(21008), status(21007)])

        XCTAssertEqual(run.calls.count, 3)
        XCTAssertEqual(run.verdict, .unavailable(appleStatus: 21007))
    }

    func testSwitchToTheEnvironmentJustAskedIsUnavailable() {
        XCTAssertEqual(run([status(21008)]).verdict, .unavailable(appleStatus: 21008))

        let run = run([status(21007), status(21007)])
        XCTAssertEqual(run.calls, [Self.production0, Self.sandbox0])
        XCTAssertEqual(run.verdict, .unavailable(appleStatus: 21007))
    }

    func testNoSwitchWhenTheEnvironmentHasNoAttemptsLeft() {
        let run = run([
            .transportFailure(.timeout), .transportFailure(.timeout), status(21007),
            .transportFailure(.timeout), .transportFailure(.timeout), status(21008),
        ], jitter: 0)  // the shortest waits: both environments' retries fit in the budget

        XCTAssertEqual(run.calls.map(\.environment), [.production, .production, .production, .sandbox, .sandbox, .sandbox])
        XCTAssertEqual(run.verdict, .unavailable(appleStatus: 21008))
    }

    // MARK: - Retries

    func testServerUnavailableThreeTimesIsThreeCallsThenUnavailable() {
        let run = run([status(21005), status(21005), status(21005)])

        XCTAssertEqual(run.calls.map(\.afterMs), [0, 1875, 5625])
        XCTAssertEqual(Set(run.calls.map(\.environment)), [.production])
        XCTAssertEqual(run.verdict, .unavailable(appleStatus: 21005))
    }

    func testServerUnavailableThenValid() {
        let run = run([status(21005), status(21005), answer(validProduction)])

        XCTAssertEqual(run.calls.count, 3)
        XCTAssertTrue(isValid(run.verdict, in: .production))
    }

    func testInternalDataAccessErrorIsRetriedThenUnavailable() {
        let run = run([status(21009), status(21009), status(21009)])

        XCTAssertEqual(run.calls.count, 3)
        XCTAssertEqual(run.verdict, .unavailable(appleStatus: 21009))
    }

    /// 21002 through every retry (spread over the budget): the receipt is invalid (`not_paid` in docs/api.md).
    func testMalformedDataIsRetriedThenInvalid() {
        let run = run([status(21002), status(21002), status(21002)])

        XCTAssertEqual(run.calls.count, 3)
        XCTAssertEqual(run.verdict, .invalid(appleStatus: 21002))
    }

    func testMalformedDataOnceIsAPassingFault() {
        let run = run([status(21002), answer(validProduction)])

        XCTAssertEqual(run.calls.map(\.afterMs), [0, 1875])
        XCTAssertTrue(isValid(run.verdict, in: .production))
    }

    func testRetriesInTheSandboxAfterASwitch() {
        let run = run([status(21007), status(21005), answer(validSandbox)])

        XCTAssertEqual(run.calls, [Self.production0, Self.sandbox0, Call(environment: .sandbox, afterMs: 1875)])
        XCTAssertTrue(isValid(run.verdict, in: .sandbox))
    }

    func testSandboxTimeoutsAfterASwitchKeepTheLastStatus() {
        let run = run([status(21007), .transportFailure(.timeout), .transportFailure(.timeout), .transportFailure(.timeout)])

        XCTAssertEqual(run.calls.count, 4)
        XCTAssertEqual(run.verdict, .unavailable(appleStatus: 21007))
    }

    // MARK: - Internal errors and is-retryable

    func testInternalErrorWithIsRetryableIsRetried() {
        let run = run([status(21100, #", "is-retryable": true"#), status(21100, #", "is-retryable": true"#), answer(validProduction)])

        XCTAssertEqual(run.calls.count, 3)
        XCTAssertTrue(isValid(run.verdict, in: .production))
    }

    func testInternalErrorWithUnderscoreSpellingIsRetried() {
        let run = run([status(21150, #", "is_retryable": "true""#), answer(validProduction)])

        XCTAssertEqual(run.calls.count, 2)
        XCTAssertTrue(isValid(run.verdict, in: .production))
    }

    func testRetryableInternalErrorThreeTimesIsUnavailable() {
        let flagged = status(21199, #", "is_retryable": 1"#)
        let run = run([flagged, flagged, flagged])

        XCTAssertEqual(run.calls.count, 3)
        XCTAssertEqual(run.verdict, .unavailable(appleStatus: 21199))
    }

    func testInternalErrorWithoutTheFlagIsUnavailableAtOnce() {
        for extra in ["", #", "is-retryable": false"#, #", "is_retryable": "false""#] {
            let run = run([status(21100, extra)])
            XCTAssertEqual(run.calls.count, 1, extra)
            XCTAssertEqual(run.verdict, .unavailable(appleStatus: 21100), extra)
        }
    }

    // MARK: - Final answers without retry

    func testInvalidReceiptsAreInvalidAtOnce() {
        for code in [21003, 21010] {
            let run = run([status(code)])
            XCTAssertEqual(run.calls.count, 1)
            XCTAssertEqual(run.verdict, .invalid(appleStatus: code))
        }
    }

    func testOurOwnFaultsAndUnknownStatusesAreUnavailableAtOnce() {
        for code in [21000, 21004, 21001, 21011, 21200, 1, -5] {
            let run = run([status(code, #", "is-retryable": true"#)])
            XCTAssertEqual(run.calls.count, 1, "\(code)")
            XCTAssertEqual(run.verdict, .unavailable(appleStatus: code), "\(code)")
        }
    }

    // MARK: - Transport and HTTP faults

    func testTimeoutThenSuccess() {
        let run = run([.transportFailure(.timeout), answer(validProduction)])

        XCTAssertEqual(run.calls, [Self.production0, Call(environment: .production, afterMs: 1875)])
        XCTAssertTrue(isValid(run.verdict, in: .production))
    }

    func testTransportFailuresRunOutAsUnavailableWithoutStatus() {
        let run = run([.transportFailure(.connection), .transportFailure(.tls), .transportFailure(.timeout)])

        XCTAssertEqual(run.calls.count, 3)
        XCTAssertEqual(run.verdict, .unavailable(appleStatus: nil))
        XCTAssertNil(run.sequence.lastAppleStatus)
    }

    func testHTTPErrorsAndUnreadableBodiesAreRetried() {
        let faults: [AppleCallResult] = [
            answer(validProduction, http: 500),
            answer("<html>503 Service Unavailable</html>"),
            answer(""),
            answer("[0]"),
            answer(#"{"status": 0, "receipt": {"bundle_id": "b", "in_app": [{"product_id": "p"}]}}"#),
        ]
        for fault in faults {
            let run = run([fault, answer(validProduction)])
            XCTAssertEqual(run.calls.count, 2)
            XCTAssertTrue(isValid(run.verdict, in: .production))
        }
    }

    // MARK: - Bounds and state

    func testNeverMoreThanSixCallsWhateverAppleAnswers() {
        let results: [AppleCallResult] = [
            status(0), status(21002), status(21003), status(21005), status(21007), status(21008),
            status(21100, #", "is-retryable": true"#), status(21100), .transportFailure(.timeout),
            answer("", http: 502), answer(validProduction), answer(validSandbox),
        ]
        var generator = SplitMix64(seed: 2014)
        for _ in 0..<2000 {
            var sequence = AppleCallSequence()
            var step = sequence.start(atMs: 0)
            var environments: [AppleEnvironment] = []
            while case .call(let environment, _) = step {
                environments.append(environment)
                step = sequence.next(after: results[Int(generator.next() % UInt64(results.count))], atMs: 0)
            }
            XCTAssertLessThanOrEqual(sequence.callCount, 6)
            XCTAssertEqual(sequence.callCount, environments.count)
            let switches = zip(environments, environments.dropFirst()).filter { $0 != $1 }.count
            XCTAssertLessThanOrEqual(switches, 2)
        }
        XCTAssertEqual(AppleRetryPolicy().maxCalls, 6)
    }

    func testAFinishedSequenceKeepsItsVerdict() {
        var sequence = AppleCallSequence()
        _ = sequence.start(atMs: 0)
        XCTAssertEqual(sequence.next(after: status(21003), atMs: 5), .finished(.invalid(appleStatus: 21003)))
        XCTAssertEqual(sequence.next(after: answer(validProduction), atMs: 9), .finished(.invalid(appleStatus: 21003)))
        XCTAssertEqual(sequence.callCount, 1)
    }

    func testStartBeginsAgain() {
        var sequence = AppleCallSequence()
        _ = sequence.start(atMs: 0)
        _ = sequence.next(after: status(21007), atMs: 10)
        XCTAssertEqual(sequence.start(atMs: 20_000), .call(.production, afterMs: 0))
        XCTAssertEqual(sequence.timeLeftMs(atMs: 20_000), 15_000)
        XCTAssertEqual(sequence.callCount, 1)
        XCTAssertNil(sequence.lastAppleStatus)
        XCTAssertEqual(sequence.environment, .production)
    }

    func testFollowsAnotherPolicy() {
        let policy = AppleRetryPolicy(budgetMs: 800, maxAttemptsPerEnvironment: 2, maxEnvironmentSwitches: 1)
        let run = run([status(21005), status(21005)], policy: policy)
        XCTAssertEqual(run.calls.map(\.afterMs), [0, 100])
        XCTAssertEqual(run.verdict, .unavailable(appleStatus: 21005))

        let switching = self.run([status(21007), status(21008)], policy: policy)
        XCTAssertEqual(switching.calls.count, 2)
        XCTAssertEqual(switching.verdict, .unavailable(appleStatus: 21008))
    }

    // MARK: - The budget

    func testBackoffGrowsWithinItsJitteredRangeAndIsCappedByTheBudget() {
        let policy = AppleRetryPolicy(budgetMs: 15_000)
        XCTAssertEqual((1...4).map { policy.backoffMs(afterAttempt: $0, jitter: 1) }, [1875, 5625, 15_000, 15_000])
        XCTAssertEqual((1...2).map { policy.backoffMs(afterAttempt: $0, jitter: 0) }, [937, 2812])
        XCTAssertEqual(policy.backoffMs(afterAttempt: 1, jitter: 0.5), 1406)
        XCTAssertEqual(policy.backoffMs(afterAttempt: 0, jitter: 1), 1875)
        XCTAssertEqual(policy.backoffMs(afterAttempt: 1, jitter: 7), 1875, "jitter past 1 is 1")
        let tests = AppleRetryPolicy(budgetMs: 2000)
        XCTAssertEqual((1...2).map { tests.backoffMs(afterAttempt: $0, jitter: 0) }, [125, 375])
        XCTAssertEqual((1...2).map { tests.backoffMs(afterAttempt: $0, jitter: 1) }, [250, 750])
        XCTAssertEqual(tests.minimumCallMs, 500)
    }

    /// Fast failures: the three calls spread over a quarter to a half of the
    /// budget, whatever the jitter, so a fault shorter than that is outlived.
    func testFastFailuresSpreadTheirCallsOverTheBudget() {
        for jitter in [0.0, 0.5, 1.0] {
            let run = run([status(21005), status(21005), status(21005)], policy: AppleRetryPolicy(budgetMs: 2000),
                          jitter: jitter, callMs: 5)
            let thirdCallStartsAt = run.calls.map(\.afterMs).reduce(0, +) + 2 * 5
            XCTAssertEqual(run.calls.count, 3, "jitter \(jitter)")
            XCTAssertGreaterThanOrEqual(thirdCallStartsAt, 500, "jitter \(jitter)")
            XCTAssertLessThanOrEqual(thirdCallStartsAt, 1010, "jitter \(jitter)")
        }
    }

    func testNoRetryWhenTooLittleOfTheBudgetWouldBeLeft() {
        let policy = AppleRetryPolicy(budgetMs: 2000)
        let slow = run([status(21005)], policy: policy, jitter: 0, callMs: 1400)
        XCTAssertEqual(slow.verdict, .unavailable(appleStatus: 21005))

        let justInTime = run([status(21005), answer(validProduction)], policy: policy, jitter: 0, callMs: 1375)
        XCTAssertEqual(justInTime.calls.map(\.afterMs), [0, 125], "2000 - 1375 - 125 = 500 left: the minimum")
        XCTAssertTrue(isValid(justInTime.verdict, in: .production))

        let timedOut = run([.transportFailure(.timeout)], policy: policy, callMs: 2000)
        XCTAssertEqual(timedOut.verdict, .unavailable(appleStatus: nil))
    }

    func testNoSwitchWhenTooLittleOfTheBudgetWouldBeLeft() {
        let run = run([status(21007)], policy: AppleRetryPolicy(budgetMs: 2000), callMs: 1501)
        XCTAssertEqual(run.verdict, .unavailable(appleStatus: 21007))
    }

    func testTimeLeftIsWhatRemainsOfTheBudget() {
        var sequence = AppleCallSequence(policy: AppleRetryPolicy(budgetMs: 2000))
        _ = sequence.start(atMs: 10_000)
        XCTAssertEqual(sequence.timeLeftMs(atMs: 10_000), 2000)
        XCTAssertEqual(sequence.timeLeftMs(atMs: 11_500), 500)
        XCTAssertEqual(sequence.timeLeftMs(atMs: 13_000), 0)
    }
}

/// A small deterministic random generator, so that the bound test is repeatable.
private struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
