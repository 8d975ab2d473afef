import XCTest

@testable import IAPCore

final class ServerAPICallSequenceTests: XCTestCase {
    private let policy = AppleRetryPolicy(budgetMs: 2000)
    private let notFound = Array(#"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#.utf8)
    private let wall: Int64 = 1_800_000_000_000

    private func sequence(fallback: Bool = true) -> ServerAPICallSequence {
        ServerAPICallSequence(policy: policy, sandboxFallback: fallback, jitter: { 1 })
    }

    private func answer(_ status: Int, _ body: [UInt8] = [], retryAfter: Int64? = nil) -> ServerAPICallResult {
        .answered(httpStatus: status, body: body, retryAfterUnixMs: retryAfter)
    }

    func test200EndsWithTheBody() {
        var calls = sequence()
        XCTAssertEqual(calls.start(atMs: 0), .call(.production, afterMs: 0))
        XCTAssertEqual(calls.next(after: answer(200, [1]), atMs: 10, wallClockMs: wall), .finished(.answered(body: [1], environment: .production)))
    }

    func testNotFoundInProductionAsksTheSandboxThenEndsNotFound() {
        var calls = sequence()
        _ = calls.start(atMs: 0)
        XCTAssertEqual(calls.next(after: answer(404, notFound), atMs: 10, wallClockMs: wall), .call(.sandbox, afterMs: 0))
        XCTAssertEqual(calls.next(after: answer(404, notFound), atMs: 20, wallClockMs: wall), .finished(.notFound))
        XCTAssertEqual(calls.callCount, 2)
    }

    func testNotFoundFoundInTheSandbox() {
        var calls = sequence()
        _ = calls.start(atMs: 0)
        _ = calls.next(after: answer(404, notFound), atMs: 10, wallClockMs: wall)
        XCTAssertEqual(calls.next(after: answer(200, [2]), atMs: 20, wallClockMs: wall), .finished(.answered(body: [2], environment: .sandbox)))
    }

    func testWithoutFallbackNotFoundEndsAtOnce() {
        var calls = sequence(fallback: false)
        _ = calls.start(atMs: 0)
        XCTAssertEqual(calls.next(after: answer(404, notFound), atMs: 10, wallClockMs: wall), .finished(.notFound))
        XCTAssertEqual(calls.callCount, 1)
    }

    func test401EndsUnauthorizedWithoutRetry() {
        var calls = sequence()
        _ = calls.start(atMs: 0)
        XCTAssertEqual(calls.next(after: answer(401), atMs: 10, wallClockMs: wall), .finished(.unauthorized))
        XCTAssertEqual(calls.callCount, 1)
    }

    func test429WaitsUntilRetryAfter() {
        var calls = sequence()
        _ = calls.start(atMs: 0)
        XCTAssertEqual(
            calls.next(after: answer(429, retryAfter: wall + 700), atMs: 10, wallClockMs: wall), .call(.production, afterMs: 700))
        // A Retry-After already past: at once.
        XCTAssertEqual(
            calls.next(after: answer(429, retryAfter: wall - 5), atMs: 720, wallClockMs: wall + 710), .call(.production, afterMs: 0))
    }

    func test429WithoutAUsableRetryAfterWaitsTheBackoff() {
        for retryAfter in [nil, Int64(2)] {
            var calls = sequence()
            _ = calls.start(atMs: 0)
            XCTAssertEqual(
                calls.next(after: answer(429, retryAfter: retryAfter), atMs: 10, wallClockMs: wall),
                .call(.production, afterMs: policy.backoffMs(afterAttempt: 1, jitter: 1)))
        }
    }

    func test429PastTheBudgetEndsUnavailableAtOnce() {
        var calls = sequence()
        _ = calls.start(atMs: 0)
        // 2000 ms budget, 500 ms minimum call: a wait to 1600 ms leaves too little.
        XCTAssertEqual(calls.next(after: answer(429, retryAfter: wall + 1590), atMs: 10, wallClockMs: wall), .finished(.unavailable))
    }

    func test5xxAndNetworkFailuresAreRetriedABoundedNumberOfTimes() {
        var calls = ServerAPICallSequence(policy: AppleRetryPolicy(budgetMs: 60_000), sandboxFallback: true, jitter: { 0 })
        _ = calls.start(atMs: 0)
        guard case .call(.production, let first) = calls.next(after: answer(500), atMs: 10, wallClockMs: wall) else {
            return XCTFail("500 not retried")
        }
        XCTAssertEqual(first, 60_000 / 16)
        guard case .call(.production, _) = calls.next(after: .transportFailure(.connection), atMs: 4000, wallClockMs: wall) else {
            return XCTFail("connection failure not retried")
        }
        XCTAssertEqual(calls.next(after: answer(503), atMs: 20_000, wallClockMs: wall), .finished(.unavailable))
        XCTAssertEqual(calls.callCount, policy.maxAttemptsPerEnvironment)
    }

    func testARetryThatWouldPassTheBudgetEndsUnavailable() {
        var calls = sequence()
        _ = calls.start(atMs: 0)
        XCTAssertEqual(calls.next(after: .transportFailure(.timeout), atMs: 1900, wallClockMs: wall), .finished(.unavailable))
    }

    func test400IsNotFound() {
        var calls = sequence()
        _ = calls.start(atMs: 0)
        XCTAssertEqual(calls.next(after: answer(400, Array(#"{"errorCode":4000006}"#.utf8)), atMs: 5, wallClockMs: wall), .finished(.notFound))
    }

    func testAFinishedSequenceKeepsItsVerdict() {
        var calls = sequence()
        _ = calls.start(atMs: 0)
        _ = calls.next(after: answer(401), atMs: 5, wallClockMs: wall)
        XCTAssertEqual(calls.next(after: answer(200), atMs: 6, wallClockMs: wall), .finished(.unauthorized))
    }

    func testWithAnswersRefusalsA4xxIsAnAnswerButA401OrA429IsNot() {
        let refusal = Array(#"{"errorCode":4030004}"#.utf8)
        for status in [400, 403, 404] {
            var calls = ServerAPICallSequence(
                policy: policy, sandboxFallback: false, firstEnvironment: .sandbox, answersRefusals: true, jitter: { 1 })
            XCTAssertEqual(calls.start(atMs: 0), .call(.sandbox, afterMs: 0))
            XCTAssertEqual(
                calls.next(after: answer(status, refusal), atMs: 10, wallClockMs: wall),
                .finished(.refused(httpStatus: status, body: refusal)))
        }
        var calls = ServerAPICallSequence(policy: policy, sandboxFallback: false, answersRefusals: true, jitter: { 1 })
        _ = calls.start(atMs: 0)
        XCTAssertEqual(calls.next(after: answer(429, retryAfter: wall + 100), atMs: 10, wallClockMs: wall), .call(.production, afterMs: 100))
        XCTAssertEqual(calls.next(after: answer(401), atMs: 120, wallClockMs: wall), .finished(.unauthorized))
    }
}

final class ServerAPIReplyTests: XCTestCase {
    func testTransactionInfo() {
        XCTAssertEqual(ServerAPIReply.signedTransactionInfo(Array(#"{"signedTransactionInfo":"a.b.c"}"#.utf8)), "a.b.c")
        XCTAssertNil(ServerAPIReply.signedTransactionInfo(Array(#"{"signedTransactionInfo":5}"#.utf8)))
        XCTAssertNil(ServerAPIReply.signedTransactionInfo(Array("<html>".utf8)))
    }

    func testOrderLookup() {
        let found = ServerAPIReply.orderLookup(Array(#"{"status":0,"signedTransactions":["a.b.c","d.e.f"]}"#.utf8))
        XCTAssertEqual(found?.known, true)
        XCTAssertEqual(found?.signedTransactions, ["a.b.c", "d.e.f"])
        let unknown = ServerAPIReply.orderLookup(Array(#"{"status":1}"#.utf8))
        XCTAssertEqual(unknown?.known, false)
        XCTAssertEqual(unknown?.signedTransactions, [])
        XCTAssertNil(ServerAPIReply.orderLookup(Array(#"{"status":0,"signedTransactions":[1]}"#.utf8)))
        XCTAssertNil(ServerAPIReply.orderLookup(Array(#"{"status":7}"#.utf8)))
    }
}
