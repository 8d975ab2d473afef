import XCTest

@testable import IAPCore

/// Get Notification History for `iapctl notifications sync`: the sandbox asked on its own, and the pages read.
final class NotificationHistoryTests: XCTestCase {
    func testAQuestionAboutTheSandboxAloneStartsThereAndRetriesThere() {
        var calls = ServerAPICallSequence(
            policy: AppleRetryPolicy(budgetMs: 60_000), sandboxFallback: false, firstEnvironment: .sandbox, jitter: { 0 })
        XCTAssertEqual(calls.start(atMs: 0), .call(.sandbox, afterMs: 0))
        guard case .call(.sandbox, _) = calls.next(
            after: .answered(httpStatus: 500, body: [], retryAfterUnixMs: nil), atMs: 10, wallClockMs: 1_800_000_000_000)
        else { return XCTFail("a 5xx is retried in the sandbox") }
        XCTAssertEqual(
            calls.next(after: .answered(httpStatus: 200, body: [1], retryAfterUnixMs: nil), atMs: 20, wallClockMs: 0),
            .finished(.answered(body: [1], environment: .sandbox)))
    }

    func testPagesAreReadUntilHasMoreIsFalse() {
        let middle = ServerAPIReply.notificationHistory(Array(#"""
            {"notificationHistory":[{"signedPayload":"a.b.c","sendAttempts":[]},{"signedPayload":"d.e.f"}],
             "hasMore":true,"paginationToken":"2"}
            """#.utf8))
        XCTAssertEqual(middle?.signedPayloads, ["a.b.c", "d.e.f"])
        XCTAssertEqual(middle?.nextPage, "2")
        let last = ServerAPIReply.notificationHistory(Array(#"{"notificationHistory":[],"hasMore":false}"#.utf8))
        XCTAssertEqual(last?.signedPayloads, [])
        XCTAssertNil(last?.nextPage)
    }

    func testAnswersNotAsDocumentedAreRefused() {
        for body in [#"{"hasMore":false}"#, #"{"notificationHistory":[{"x":1}],"hasMore":false}"#,
                     #"{"notificationHistory":[],"hasMore":true}"#, "[]"] {
            XCTAssertNil(ServerAPIReply.notificationHistory(Array(body.utf8)), body)
        }
    }
}
