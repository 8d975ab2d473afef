import XCTest

@testable import IAPCore

final class LoginThrottleTests: XCTestCase {
    let throttle = LoginThrottle.standard

    private func failures(
        pair: Int = 0, name: Int = 0, sinceName: Int64? = nil, address: Int = 0, sinceAddress: Int64? = nil
    ) -> LoginThrottle.Failures {
        LoginThrottle.Failures(
            ofNameFromAddress: pair, ofName: name, msSinceNameFailure: sinceName, fromAddress: address,
            msSinceAddressFailure: sinceAddress)
    }

    func testFiveFailuresLockTheNameFromThatAddressOnly() {
        XCTAssertEqual(throttle.decide(failures(pair: 4, name: 4, sinceName: 10, address: 4, sinceAddress: 10)), .allowed)
        XCTAssertEqual(throttle.decide(failures(pair: 5, name: 5, sinceName: 600_000, address: 5, sinceAddress: 600_000)), .locked)
        // The same name from another address: slowed a second after the newest failure, never locked.
        XCTAssertEqual(throttle.decide(failures(pair: 0, name: 5, sinceName: 200)), .wait(seconds: 1))
        XCTAssertEqual(throttle.decide(failures(pair: 0, name: 5, sinceName: 1_000)), .allowed)
    }

    func testANamesFailuresAcrossAddressesSlowItDownWithADoublingDelay() {
        XCTAssertEqual(throttle.delaySeconds(afterFailures: 4, freeFailures: 5), 0)
        XCTAssertEqual((5...12).map { throttle.delaySeconds(afterFailures: $0, freeFailures: 5) }, [1, 2, 4, 8, 16, 32, 60, 60])
        XCTAssertEqual(throttle.delaySeconds(afterFailures: 1_000_000, freeFailures: 5), 60, "no overflow")
        XCTAssertEqual(throttle.decide(failures(name: 100, sinceName: 59_001)), .wait(seconds: 1))
        XCTAssertEqual(throttle.decide(failures(name: 100, sinceName: 60_000)), .allowed, "slowed, never locked")
    }

    func testAnAddressIsSlowedNotLockedAfterTwentyFailures() {
        XCTAssertEqual(throttle.decide(failures(address: 19, sinceAddress: 0)), .allowed)
        XCTAssertEqual(throttle.decide(failures(address: 20, sinceAddress: 0)), .wait(seconds: 1))
        XCTAssertEqual(throttle.decide(failures(address: 23, sinceAddress: 3_000)), .wait(seconds: 5))
        XCTAssertEqual(throttle.decide(failures(address: 500, sinceAddress: 60_000)), .allowed)
    }

    func testTheLongerOfTwoDelaysAndAClockThatMovedBack() {
        XCTAssertEqual(throttle.decide(failures(name: 6, sinceName: 0, address: 20, sinceAddress: 0)), .wait(seconds: 2))
        XCTAssertEqual(throttle.decide(failures(name: 6, sinceName: -5_000)), .wait(seconds: 2), "a failure in the future")
    }

    func testAuditActionsAreTheColumnsValues() {
        XCTAssertEqual(AuditAction.console(.deliverLookup).rawValue, "deliver_lookup")
        XCTAssertEqual(
            [AuditAction.passwordSet, .unlock, .login, .loginFailed, .logout].map(\.rawValue),
            ["staff_passwd", "staff_unlock", "login", "login_failed", "logout"])
    }
}
