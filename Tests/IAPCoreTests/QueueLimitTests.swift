import XCTest

@testable import IAPCore

final class QueueLimitTests: XCTestCase {
    func testJobsAreBoundedByCount() {
        let limit = QueueLimit(jobs: 2, bytes: 1 << 20)
        var usage = QueueUsage()
        XCTAssertTrue(usage.admit(10, under: limit))
        XCTAssertTrue(usage.admit(10, under: limit))
        XCTAssertFalse(usage.admit(10, under: limit))
        XCTAssertEqual(usage.jobs, 2)
        XCTAssertEqual(usage.bytes, 20)
        usage.release(10)
        XCTAssertTrue(usage.admit(10, under: limit))
    }

    func testJobsAreBoundedByBytes() {
        let limit = QueueLimit(jobs: 100, bytes: 1000)
        var usage = QueueUsage()
        XCTAssertTrue(usage.admit(600, under: limit))
        XCTAssertTrue(usage.admit(400, under: limit))
        XCTAssertFalse(usage.admit(1, under: limit), "1,001 bytes would pass the bound")
        XCTAssertEqual(usage.bytes, 1000)
        usage.release(600)
        XCTAssertTrue(usage.admit(600, under: limit))
    }

    func testOneJobLargerThanTheByteBoundPassesAnEmptyQueueOnly() {
        // A 1.4 MB receipt must not be refused for good by a small byte bound.
        let limit = QueueLimit(jobs: 100, bytes: 1000)
        var usage = QueueUsage()
        XCTAssertTrue(usage.admit(5000, under: limit))
        XCTAssertFalse(usage.admit(1, under: limit))
        usage.release(5000)
        XCTAssertEqual(usage, QueueUsage())
    }

    func testDefaults() {
        XCTAssertEqual(QueueLimit(), QueueLimit(jobs: 4096, bytes: 64 * 1024 * 1024))
    }
}
