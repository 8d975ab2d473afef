import XCTest

@testable import IAPCore

final class BoundedFIFOTests: XCTestCase {
    /// A job that can be watched through a weak reference.
    private final class Job {
        let number: Int
        init(_ number: Int) { self.number = number }
    }

    func testJobsComeOutInOrderInBatches() {
        var fifo = BoundedFIFO<Int>(limit: QueueLimit(jobs: 100, bytes: 1000))
        for number in 1...5 {
            XCTAssertTrue(fifo.push(number, bytes: 10))
        }
        XCTAssertEqual(fifo.take(upTo: 2), [1, 2])
        XCTAssertTrue(fifo.push(6, bytes: 10))
        XCTAssertEqual(fifo.take(upTo: 10), [3, 4, 5, 6])
        XCTAssertEqual(fifo.take(upTo: 10), [])
        XCTAssertEqual(fifo.count, 0)
    }

    func testTheLimitIsTheQueueUsagesAndTakingReleasesIt() {
        var fifo = BoundedFIFO<Int>(limit: QueueLimit(jobs: 3, bytes: 100))
        XCTAssertTrue(fifo.push(1, bytes: 60))
        XCTAssertTrue(fifo.push(2, bytes: 40))
        XCTAssertFalse(fifo.push(3, bytes: 1), "101 bytes would pass the bound")
        XCTAssertEqual(fifo.count, 2)
        XCTAssertEqual(fifo.take(upTo: 1), [1])
        XCTAssertEqual(fifo.usage.bytes, 40)
        XCTAssertEqual(fifo.usage.jobs, 1)
        XCTAssertTrue(fifo.push(3, bytes: 60))
        XCTAssertEqual(fifo.take(upTo: 5), [2, 3])
        XCTAssertEqual(fifo.usage, QueueUsage())
    }

    /// A lasting backlog: jobs arrive as fast as they are taken, so the queue
    /// never empties. Every job taken must be let go, and the storage must stay
    /// the size of the backlog, not of everything ever queued.
    func testJobsTakenAreLetGoWhileTheQueueNeverEmpties() {
        var fifo = BoundedFIFO<Job>(limit: QueueLimit(jobs: 1000, bytes: 1 << 20))
        let backlog = 100
        for number in 0..<backlog {
            XCTAssertTrue(fifo.push(Job(number), bytes: 10))
        }
        var taken: [Weak] = []
        var next = backlog
        var mostSlotsHeld = 0
        for _ in 0..<1000 {
            for _ in 0..<16 {
                XCTAssertTrue(fifo.push(Job(next), bytes: 10))
                next += 1
            }
            let batch = fifo.take(upTo: 16)
            XCTAssertEqual(batch.count, 16)
            taken += batch.map(Weak.init)
            mostSlotsHeld = max(mostSlotsHeld, fifo.slotsHeld)
            XCTAssertEqual(fifo.count, backlog, "the backlog stays, the queue never empties")
        }
        XCTAssertEqual(taken.count, 16_000)
        XCTAssertEqual(taken.filter { $0.job != nil }.count, 0, "jobs taken are still held by the queue")
        XCTAssertLessThanOrEqual(mostSlotsHeld, 2 * (backlog + 16), "storage grows with every job ever queued")
        XCTAssertEqual(fifo.usage.jobs, backlog)
        XCTAssertEqual(fifo.take(upTo: 1).first?.number, next - backlog, "order kept through the compactions")
    }

    private struct Weak {
        weak var job: Job?
        init(_ job: Job) { self.job = job }
    }
}
