import XCTest

@testable import IAPCore

final class NotificationSyncWindowTests: XCTestCase {
    func testReadsADateOrAnISOTimeInUTC() {
        XCTAssertEqual(NotificationSyncWindow.milliseconds(since: "2026-11-24"), 1_795_478_400_000)
        XCTAssertEqual(NotificationSyncWindow.milliseconds(since: "2026-11-24T06:30:15Z"), 1_795_478_400_000 + 23_415_000)
        XCTAssertEqual(NotificationSyncWindow.milliseconds(since: "2026-11-24T06:30:15+00:00"), 1_795_478_400_000 + 23_415_000)
        for bad in ["", "2026-11-31", "24/11/2026", "2026-11-24T06:30:15", "2026-11-24T06:30:15+08:00", "yesterday"] {
            XCTAssertNil(NotificationSyncWindow.milliseconds(since: bad), bad)
        }
    }

    func testAppleKeepsHundredAndEightyDays() {
        let now: Int64 = 1_795_478_400_000
        XCTAssertNil(NotificationSyncWindow.problem(since: now - 86_400_000, nowMs: now))
        XCTAssertNil(NotificationSyncWindow.problem(since: now - 180 * 86_400_000, nowMs: now))
        XCTAssertNotNil(NotificationSyncWindow.problem(since: now - 181 * 86_400_000, nowMs: now))
        XCTAssertNotNil(NotificationSyncWindow.problem(since: now + 1, nowMs: now))
    }
}
