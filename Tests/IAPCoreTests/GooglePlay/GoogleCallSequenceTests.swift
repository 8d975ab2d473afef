import XCTest

@testable import IAPCore

final class GoogleCallSequenceTests: XCTestCase {
    private func sequence(budgetMs: Int = 8000, hasToken: Bool) -> GoogleCallSequence {
        GoogleCallSequence(policy: AppleRetryPolicy(budgetMs: budgetMs), hasToken: { hasToken }, jitter: { 1 })
    }

    private func answer(_ status: Int, retryAfter: Int64? = nil) -> GoogleCallSequence.Result {
        .answered(httpStatus: status, body: Array("{}".utf8), retryAfterSeconds: retryAfter)
    }

    func testWithoutATokenTheTokenComesFirstThenTheCall() {
        var calls = sequence(hasToken: false)
        XCTAssertEqual(calls.start(atMs: 0), .call(.token, afterMs: 0))
        XCTAssertEqual(calls.next(after: answer(200), atMs: 10), .call(.api, afterMs: 0))
        XCTAssertEqual(calls.next(after: answer(200), atMs: 20), .finished(.answered(httpStatus: 200, body: Array("{}".utf8))))
    }

    func testA401GetsOneNewTokenAndOneRetryOnly() {
        var calls = sequence(hasToken: true)
        XCTAssertEqual(calls.start(atMs: 0), .call(.api, afterMs: 0))
        XCTAssertEqual(calls.next(after: answer(401), atMs: 10), .call(.token, afterMs: 0))
        XCTAssertEqual(calls.next(after: answer(200), atMs: 20), .call(.api, afterMs: 0))
        XCTAssertEqual(calls.next(after: answer(401), atMs: 30), .finished(.unauthorized))
    }

    func testAGrantRefusedIsUnauthorizedAndAnUnreadableTokenUnavailable() {
        var refused = sequence(hasToken: false)
        _ = refused.start(atMs: 0)
        XCTAssertEqual(refused.next(after: answer(400), atMs: 5), .finished(.unauthorized))
        var unreadable = sequence(hasToken: false)
        _ = unreadable.start(atMs: 0)
        XCTAssertEqual(unreadable.next(after: .unreadableToken, atMs: 5), .finished(.unavailable))
    }

    func test404And410ProveNothingAndOther4xxAreAnswered() {
        for status in [404, 410] {
            var calls = sequence(hasToken: true)
            _ = calls.start(atMs: 0)
            XCTAssertEqual(calls.next(after: answer(status), atMs: 5), .finished(.notFound))
        }
        var consumedTwice = sequence(hasToken: true)
        _ = consumedTwice.start(atMs: 0)
        XCTAssertEqual(
            consumedTwice.next(after: answer(400), atMs: 5), .finished(.answered(httpStatus: 400, body: Array("{}".utf8))))
    }

    func test429WaitsRetryAfterSecondsAnd5xxTheBackoffWithinTheBudget() {
        var calls = sequence(budgetMs: 8000, hasToken: true)
        _ = calls.start(atMs: 0)
        XCTAssertEqual(calls.next(after: answer(429, retryAfter: 1), atMs: 100), .call(.api, afterMs: 1000))
        // Backoff ceiling B/8 after the first failure, 3B/8 after the second (jitter 1: the ceiling).
        XCTAssertEqual(calls.next(after: answer(503), atMs: 1200), .call(.api, afterMs: 3000))
        // A Retry-After past the budget's last useful moment: unavailable at once.
        XCTAssertEqual(calls.next(after: answer(429, retryAfter: 10), atMs: 4300), .finished(.unavailable))
    }

    func testTransportFailuresOfTheTokenEndpointAreRetried() {
        var calls = sequence(budgetMs: 8000, hasToken: false)
        _ = calls.start(atMs: 0)
        XCTAssertEqual(calls.next(after: .transportFailure(.connection), atMs: 5), .call(.token, afterMs: 1000))
    }
}
