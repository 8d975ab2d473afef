import XCTest

@testable import IAPCore

/// The generic parts every conversation with a store shares: `CallRun` over any `CallSequence`,
/// `SingleCallSequence`, `CallBudget`.
final class CallRunTests: XCTestCase {
    private let wall: Int64 = 1_800_000_000_000

    private func received(_ status: Int, _ body: [UInt8] = []) -> ServerAPICallSequence.Received {
        ServerAPICallSequence.Received(.answered(httpStatus: status, body: body, retryAfterUnixMs: nil), wallClockMs: wall)
    }

    func testARunKeepsTheTargetAskedLastAndEndsWithTheSequencesVerdict() {
        var run = CallRun(
            ServerAPICallSequence(policy: AppleRetryPolicy(budgetMs: 2000), sandboxFallback: true, jitter: { 1 }))
        XCTAssertNil(run.target)
        XCTAssertEqual(run.start(atMs: 0), .call(.production, afterMs: 0))
        XCTAssertEqual(run.target, .production)
        XCTAssertEqual(run.next(after: received(404), atMs: 10), .call(.sandbox, afterMs: 0))
        XCTAssertEqual(run.target, .sandbox)
        XCTAssertEqual(run.next(after: received(200, [7]), atMs: 20), .finished(.answered(body: [7], environment: .sandbox)))
        XCTAssertEqual(run.outcome, .answered(body: [7], environment: .sandbox))
        XCTAssertFalse(run.stoppedByDeadline)
        // Once finished it keeps its verdict, whatever comes after.
        XCTAssertEqual(run.next(after: received(500), atMs: 30), .finished(.answered(body: [7], environment: .sandbox)))
    }

    func testARunStoppedByItsDeadlineEndsWithTheVerdictForAStoppedSequence() {
        var run = CallRun(AppleCallSequence(policy: AppleRetryPolicy(budgetMs: 2000), jitter: { 1 }))
        _ = run.start(atMs: 0)
        let busy = Array(#"{"status":21005}"#.utf8)
        guard case .call(.production, _) = run.next(after: .answered(httpStatus: 200, body: busy), atMs: 10) else {
            return XCTFail("21005 is retried")
        }
        run.stopByDeadline()
        XCTAssertTrue(run.stoppedByDeadline)
        XCTAssertEqual(run.outcome, .unavailable(appleStatus: 21005))
        XCTAssertEqual(run.next(after: .transportFailure(.timeout), atMs: 20), .finished(.unavailable(appleStatus: 21005)))
    }

    func testARunOfGoogleCallsTargetsTheTokenThenTheAPI() {
        var run = CallRun(GoogleCallSequence(policy: AppleRetryPolicy(budgetMs: 8000), hasToken: { false }, jitter: { 1 }))
        XCTAssertEqual(run.start(atMs: 0), .call(.token, afterMs: 0))
        XCTAssertEqual(run.target, .token)
        let ok = GoogleCallSequence.Result.answered(httpStatus: 200, body: [], retryAfterSeconds: nil)
        XCTAssertEqual(run.next(after: ok, atMs: 5), .call(.api, afterMs: 0))
        XCTAssertEqual(run.target, .api)
        run.stopByDeadline()
        XCTAssertEqual(run.outcome, .unavailable)
    }

    func testASingleCallIsOneCallWhoseResultIsTheVerdict() {
        var single = SingleCallSequence(environment: .sandbox, budgetMs: 1500, verdictWhenStopped: "stopped")
        XCTAssertEqual(single.start(atMs: 100), .call(.sandbox, afterMs: 0))
        XCTAssertEqual(single.timeLeftMs(atMs: 600), 1000)
        XCTAssertEqual(single.timeLeftMs(atMs: 5000), 0)
        XCTAssertEqual(single.next(after: "HTTP 503", atMs: 700), .finished("HTTP 503"))
        var stopped = CallRun(SingleCallSequence(environment: .production, budgetMs: 1500, verdictWhenStopped: "stopped"))
        _ = stopped.start(atMs: 0)
        stopped.stopByDeadline()
        XCTAssertEqual(stopped.outcome, "stopped")
    }

    func testTheBudgetCountsCallsPerTargetAndKeepsTheLastMomentForACall() {
        var budget = CallBudget<GoogleCallTarget>(
            policy: AppleRetryPolicy(budgetMs: 8000, maxAttemptsPerEnvironment: 2), first: .api, jitter: { 1 })
        budget.start(atMs: 1000)
        budget.recordCall(to: .token)
        budget.recordCall(to: .api)
        budget.recordCall(to: .api)
        XCTAssertEqual(budget.callCount, 3)
        XCTAssertEqual(budget.target, .api)
        XCTAssertTrue(budget.attemptsLeft(at: .token))
        XCTAssertFalse(budget.attemptsLeft(at: .api))
        XCTAssertFalse(budget.allowsRetry(afterMs: 0, atMs: 1000))
        // 8000 from 1000: a call needs B/4 = 2000 ms, so the last one starts at 7000.
        XCTAssertTrue(budget.fits(afterMs: 1000, atMs: 6000))
        XCTAssertFalse(budget.fits(afterMs: 1001, atMs: 6000))
        // The second call to `api` failed: the wait's ceiling is 3B/8.
        XCTAssertEqual(budget.backoffMs(), 3000)
        budget.start(atMs: 0)
        XCTAssertEqual(budget.callCount, 0)
        XCTAssertEqual(budget.timeLeftMs(atMs: 500), 7500)
    }
}
