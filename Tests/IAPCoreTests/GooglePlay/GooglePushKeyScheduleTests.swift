import XCTest

@testable import IAPCore

final class GooglePushKeyScheduleTests: XCTestCase {
    let keys = try! GooglePushKeys.parse(GooglePushTests.jwks())

    func testMaxAgeIsReadFromCacheControl() {
        XCTAssertEqual(GooglePushKeySchedule.maxAgeMs("public, max-age=19842, must-revalidate, no-transform"), 19_842_000)
        XCTAssertEqual(GooglePushKeySchedule.maxAgeMs("MAX-AGE = \"60\""), 60_000)
        XCTAssertNil(GooglePushKeySchedule.maxAgeMs("no-store"))
        XCTAssertNil(GooglePushKeySchedule.maxAgeMs("max-age=-1"))
        XCTAssertNil(GooglePushKeySchedule.maxAgeMs("max-age=soon"))
    }

    func testTheFirstCheckFetches() {
        XCTAssertTrue(GooglePushKeySchedule().needsFetch(for: "trusted", nowMs: 0))
    }

    func testKeysAreKeptForTheirMaxAge() {
        var schedule = GooglePushKeySchedule()
        schedule.fetched(keys, cacheControl: "public, max-age=300", nowMs: 1_000)
        XCTAssertFalse(schedule.needsFetch(for: "trusted", nowMs: 300_999))
        XCTAssertTrue(schedule.needsFetch(for: "trusted", nowMs: 301_000))
    }

    func testWithoutMaxAgeKeysAreKeptAnHour() {
        var schedule = GooglePushKeySchedule()
        schedule.fetched(keys, cacheControl: nil, nowMs: 0)
        XCTAssertFalse(schedule.needsFetch(for: "trusted", nowMs: 3_599_999))
        XCTAssertTrue(schedule.needsFetch(for: "trusted", nowMs: 3_600_000))
    }

    func testAnUnknownKidFetchesAtMostOnceAMinute() {
        var schedule = GooglePushKeySchedule()
        schedule.fetched(keys, cacheControl: "max-age=86400", nowMs: 0)
        XCTAssertFalse(schedule.needsFetch(for: "made-up", nowMs: 59_999))
        XCTAssertTrue(schedule.needsFetch(for: "made-up", nowMs: 60_000))
        schedule.fetched(keys, cacheControl: "max-age=86400", nowMs: 60_000)
        XCTAssertFalse(schedule.needsFetch(for: "made-up", nowMs: 100_000))
    }

    func testAFailedFetchKeepsTheKeysAndWaitsAMinute() {
        var schedule = GooglePushKeySchedule()
        schedule.fetched(keys, cacheControl: "max-age=10", nowMs: 0)
        schedule.fetchFailed(nowMs: 70_000)
        XCTAssertNotNil(schedule.keys?.keys["trusted"])
        XCTAssertFalse(schedule.needsFetch(for: "trusted", nowMs: 129_999))
        XCTAssertTrue(schedule.needsFetch(for: "trusted", nowMs: 130_000))
    }
}
