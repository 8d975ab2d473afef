import IAPCore
import XCTest

final class AppleCallScheduleTests: XCTestCase {
    private let schedule = AppleCallSchedule(maxCalls: 8)
    private let ms: UInt64 = 1_000_000

    func testHeldCallsCountAgainstTheLimitAsCallsUnderWay() {
        XCTAssertTrue(schedule.hasRoom(underWay: 7, held: 0))
        XCTAssertFalse(schedule.hasRoom(underWay: 8, held: 0))
        XCTAssertFalse(schedule.hasRoom(underWay: 5, held: 3))
        XCTAssertTrue(schedule.hasRoom(underWay: 0, held: 7))
    }

    func testQueuedCallsStartAsSlotsFreeUp() {
        XCTAssertEqual(schedule.startable(queued: 20, underWay: 5, held: 1), 2)
        XCTAssertEqual(schedule.startable(queued: 1, underWay: 0, held: 0), 1)
        XCTAssertEqual(schedule.startable(queued: 0, underWay: 0, held: 0), 0)
        XCTAssertEqual(schedule.startable(queued: 3, underWay: 8, held: 0), 0)
        XCTAssertEqual(schedule.startable(queued: 3, underWay: 6, held: 4), 0, "never negative while over the limit")
    }

    func testTheThreadDoesNotSleepWhileAQueuedCallCanStart() {
        XCTAssertEqual(schedule.waitMs(nowNs: 0, queued: 1, underWay: 7, held: 0, wakeAtNs: [500 * ms]), 0)
    }

    func testAFullClientSleepsUntilTheFirstWakeUpRoundedUp() {
        let now: UInt64 = 10_000 * ms
        let wake = [now + 250 * ms + 1, now + 700 * ms]
        XCTAssertEqual(schedule.waitMs(nowNs: now, queued: 4, underWay: 8, held: 0, wakeAtNs: wake), 251)
        XCTAssertEqual(schedule.waitMs(nowNs: now, queued: 0, underWay: 0, held: 0, wakeAtNs: wake), 251)
    }

    func testAWakeUpDueAlreadyMeansNoSleepAndNoneMeansOneSecond() {
        let now: UInt64 = 10_000 * ms
        XCTAssertEqual(schedule.waitMs(nowNs: now, queued: 0, underWay: 2, held: 0, wakeAtNs: [now - ms, now + 9 * ms]), 0)
        XCTAssertEqual(schedule.waitMs(nowNs: now, queued: 0, underWay: 2, held: 0, wakeAtNs: []), 1000)
        XCTAssertEqual(schedule.waitMs(nowNs: now, queued: 0, underWay: 2, held: 0, wakeAtNs: [now + 60_000 * ms]), 1000)
    }

    func testACallMustStartBeforeItsDeadlineLeavesTheShortestCall() {
        XCTAssertEqual(AppleCallSchedule.lastStartNs(deadlineNs: 5_000 * ms, appleTimeoutMs: 2000), 4_000 * ms)
        XCTAssertEqual(AppleCallSchedule.lastStartNs(deadlineNs: 5_000 * ms, appleTimeoutMs: 300), 4_700 * ms)
        XCTAssertEqual(AppleCallSchedule.lastStartNs(deadlineNs: 500 * ms, appleTimeoutMs: 2000), 0)
        XCTAssertEqual(
            AppleCallSchedule.lastStartNs(deadlineNs: .max, appleTimeoutMs: 2000), .max - 1000 * ms,
            "no deadline: any time")
    }
}
