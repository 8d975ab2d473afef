import XCTest

@testable import IAPCore

final class WebhookRetryPolicyTests: XCTestCase {
    func testTheWaitStartsAtOneSecondAndDoublesToAnHour() {
        let delays = (1...14).map { WebhookRetryPolicy.delayMs(afterFailedAttempts: $0) / 1000 }
        XCTAssertEqual(delays, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3600, 3600])
        XCTAssertEqual(WebhookRetryPolicy.delayMs(afterFailedAttempts: 1_000_000), 3_600_000)
        XCTAssertEqual(WebhookRetryPolicy.delayMs(afterFailedAttempts: 0), 1000)
    }

    func testAFailureWithinTheWindowIsRetriedAfterTheWait() {
        let created: Int64 = 1_700_000_000_000
        XCTAssertEqual(
            WebhookRetryPolicy.afterFailure(failedAttempts: 1, windowStartMs: created, nowMs: created + 5),
            .retry(atMs: created + 1005))
        XCTAssertEqual(
            WebhookRetryPolicy.afterFailure(failedAttempts: 4, windowStartMs: created, nowMs: created + 60_000),
            .retry(atMs: created + 68_000))
    }

    func testTheLastRetryIsAtTheEndOfTheSeventyTwoHours() {
        let created: Int64 = 1_700_000_000_000
        let end = created + 72 * 3_600_000
        XCTAssertEqual(
            WebhookRetryPolicy.afterFailure(failedAttempts: 80, windowStartMs: created, nowMs: end - 60_000),
            .retry(atMs: end))
    }

    func testAFailureAtOrAfterSeventyTwoHoursGivesUp() {
        let created: Int64 = 1_700_000_000_000
        let end = created + 72 * 3_600_000
        XCTAssertEqual(WebhookRetryPolicy.afterFailure(failedAttempts: 80, windowStartMs: created, nowMs: end), .giveUp)
        XCTAssertEqual(
            WebhookRetryPolicy.afterFailure(failedAttempts: 1, windowStartMs: created, nowMs: end + 1), .giveUp)
    }
}
