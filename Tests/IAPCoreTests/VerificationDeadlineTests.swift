import XCTest

@testable import IAPCore

final class VerificationDeadlineTests: XCTestCase {
    func testBudgetIsThreeFullCallsAndTenSecondsBelowNginxsTimeout() {
        XCTAssertEqual(VerificationDeadline.budgetMs(appleTimeoutMs: 15000), 55000)
        XCTAssertEqual(VerificationDeadline.budgetMs(appleTimeoutMs: 2000), 16000)
        XCTAssertEqual(VerificationDeadline.budgetMs(appleTimeoutMs: 100), 10300)
        XCTAssertEqual(VerificationDeadline.budgetMs(appleTimeoutMs: 30000), 100_000)
        XCTAssertEqual(VerificationDeadline.budgetMs(appleTimeoutMs: 120_000), 100_000)
        for timeout in stride(from: 100, through: 120_000, by: 100) {
            let budget = VerificationDeadline.budgetMs(appleTimeoutMs: timeout)
            XCTAssertLessThanOrEqual(budget + 20_000, VerificationDeadline.nginxReadTimeoutMs, "\(timeout)")
        }
    }

    func testACallStartsOnlyWithTimeLeftAndNeverRunsPastTheDeadline() {
        XCTAssertEqual(VerificationDeadline.callTimeoutMs(appleTimeoutMs: 15000, remainingMs: 55000), 15000)
        XCTAssertEqual(VerificationDeadline.callTimeoutMs(appleTimeoutMs: 15000, remainingMs: 4000), 4000)
        XCTAssertEqual(VerificationDeadline.callTimeoutMs(appleTimeoutMs: 15000, remainingMs: 1000), 1000)
        XCTAssertNil(VerificationDeadline.callTimeoutMs(appleTimeoutMs: 15000, remainingMs: 999))
        XCTAssertNil(VerificationDeadline.callTimeoutMs(appleTimeoutMs: 15000, remainingMs: 0))
        // A timeout under a second needs only itself left.
        XCTAssertEqual(VerificationDeadline.callTimeoutMs(appleTimeoutMs: 500, remainingMs: 500), 500)
        XCTAssertNil(VerificationDeadline.callTimeoutMs(appleTimeoutMs: 500, remainingMs: 499))
        // With 120 s allowed per call, the first call still starts, cut to the deadline.
        XCTAssertEqual(VerificationDeadline.callTimeoutMs(appleTimeoutMs: 120_000, remainingMs: 100_000), 100_000)
    }

    func testDeadline() {
        let deadline = Deadline(startNs: 5_000_000_000, budgetMs: 16000)
        XCTAssertEqual(deadline.atNs, 21_000_000_000)
        XCTAssertFalse(deadline.isPast(nowNs: 20_999_999_999))
        XCTAssertTrue(deadline.isPast(nowNs: 21_000_000_000))
        XCTAssertEqual(deadline.remainingMs(nowNs: 5_000_000_000), 16000)
        XCTAssertEqual(deadline.remainingMs(nowNs: 20_999_000_001), 0)
        XCTAssertEqual(deadline.remainingMs(nowNs: 30_000_000_000), 0)
        XCTAssertFalse(Deadline.never.isPast(nowNs: .max - 1))
        XCTAssertEqual(Deadline.never.remainingMs(nowNs: 0), Int(Int32.max))
    }
}
