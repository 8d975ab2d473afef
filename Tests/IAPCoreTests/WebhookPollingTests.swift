import XCTest

@testable import IAPCore

final class WebhookPollingTests: XCTestCase {
    func testAQuickLookIsRepeatedEvery200Ms() {
        XCTAssertEqual(WebhookPolling.idleWaitMs(afterLookOf: 0), 200)
        XCTAssertEqual(WebhookPolling.idleWaitMs(afterLookOf: 20), 200)
    }

    func testASlowLookWaitsTenTimesItsDurationAtMostFiveSeconds() {
        XCTAssertEqual(WebhookPolling.idleWaitMs(afterLookOf: 107), 1070)
        XCTAssertEqual(WebhookPolling.idleWaitMs(afterLookOf: 900), 5000)
    }
}
