import XCTest

@testable import IAPCore

final class GoogleCallSequenceTests: XCTestCase {
    private func sequence(budgetMs: Int = 8000) -> GoogleCallSequence {
        GoogleCallSequence(policy: AppleRetryPolicy(budgetMs: budgetMs), jitter: { 1 })
    }

    private func answer(_ status: Int, retryAfter: Int64? = nil) -> GoogleCallSequence.Result {
        .answered(httpStatus: status, body: Array("{}".utf8), retryAfterSeconds: retryAfter)
    }

    func testWithoutATokenTheTokenComesFirstThenTheCall() {
        var calls = sequence()
        XCTAssertEqual(calls.start(atMs: 0, hasToken: false), .fetchToken(afterMs: 0))
        XCTAssertTrue(calls.askingToken)
        XCTAssertEqual(calls.next(afterToken: answer(200), tokenStored: true, atMs: 10), .call(afterMs: 0))
        XCTAssertFalse(calls.askingToken)
        XCTAssertEqual(calls.next(afterCall: answer(200), atMs: 20), .finished(.answered(httpStatus: 200, body: Array("{}".utf8))))
    }

    func testA401GetsOneNewTokenAndOneRetryOnly() {
        var calls = sequence()
        XCTAssertEqual(calls.start(atMs: 0, hasToken: true), .call(afterMs: 0))
        XCTAssertEqual(calls.next(afterCall: answer(401), atMs: 10), .fetchToken(afterMs: 0))
        XCTAssertEqual(calls.next(afterToken: answer(200), tokenStored: true, atMs: 20), .call(afterMs: 0))
        XCTAssertEqual(calls.next(afterCall: answer(401), atMs: 30), .finished(.unauthorized))
    }

    func testAGrantRefusedIsUnauthorizedAndAnUnreadableTokenUnavailable() {
        var refused = sequence()
        _ = refused.start(atMs: 0, hasToken: false)
        XCTAssertEqual(refused.next(afterToken: answer(400), tokenStored: false, atMs: 5), .finished(.unauthorized))
        var unreadable = sequence()
        _ = unreadable.start(atMs: 0, hasToken: false)
        XCTAssertEqual(unreadable.next(afterToken: answer(200), tokenStored: false, atMs: 5), .finished(.unavailable))
    }

    func test404And410ProveNothingAndOther4xxAreAnswered() {
        for status in [404, 410] {
            var calls = sequence()
            _ = calls.start(atMs: 0, hasToken: true)
            XCTAssertEqual(calls.next(afterCall: answer(status), atMs: 5), .finished(.notFound))
        }
        var consumedTwice = sequence()
        _ = consumedTwice.start(atMs: 0, hasToken: true)
        XCTAssertEqual(
            consumedTwice.next(afterCall: answer(400), atMs: 5), .finished(.answered(httpStatus: 400, body: Array("{}".utf8))))
    }

    func test429WaitsRetryAfterSecondsAnd5xxTheBackoffWithinTheBudget() {
        var calls = sequence(budgetMs: 8000)
        _ = calls.start(atMs: 0, hasToken: true)
        XCTAssertEqual(calls.next(afterCall: answer(429, retryAfter: 1), atMs: 100), .call(afterMs: 1000))
        // Backoff ceiling B/8 after the first failure, 3B/8 after the second (jitter 1: the ceiling).
        XCTAssertEqual(calls.next(afterCall: answer(503), atMs: 1200), .call(afterMs: 3000))
        // A Retry-After past the budget's last useful moment: unavailable at once.
        XCTAssertEqual(calls.next(afterCall: answer(429, retryAfter: 10), atMs: 4300), .finished(.unavailable))
    }

    func testTransportFailuresOfTheTokenEndpointAreRetried() {
        var calls = sequence(budgetMs: 8000)
        _ = calls.start(atMs: 0, hasToken: false)
        XCTAssertEqual(calls.next(afterToken: .transportFailure(.connection), tokenStored: false, atMs: 5), .fetchToken(afterMs: 1000))
        XCTAssertTrue(calls.askingToken)
    }
}
