import Dispatch
import IAPCore
@testable import IAPService
import Synchronization
import XCTest

/// The worker lifecycle without servers: a group starts its workers in order and stops them in
/// reverse, each joined before the one before it is asked; a stop ends a worker's sleep at once
/// and wakes a wait of its own; a worker's threads are all joined; a worker can run again.
final class WorkerGroupTests: XCTestCase {
    func testAGroupStartsInOrderAndStopsInReverseEachJoinedBeforeTheNext() {
        let journal = Journal()
        let group = WorkerGroup(["apple", "consumption", "finish"].map { SleepingWorker($0, journal) })
        group.start()
        XCTAssertTrue(waitUntil { journal.entries.filter { $0.hasPrefix("run ") }.count == 3 })
        XCTAssertEqual(journal.entries.filter { $0.hasPrefix("run ") }.sorted(), ["run apple", "run consumption", "run finish"])
        group.stop()
        let entries = journal.entries
        XCTAssertEqual(entries.filter { $0.hasPrefix("returned ") }, ["returned finish", "returned consumption", "returned apple"])
        // Each is joined before the one before it is asked to stop.
        let position = { (entry: String) in entries.firstIndex(of: entry) ?? -1 }
        XCTAssertLessThan(position("returned finish"), position("wake consumption"))
        XCTAssertLessThan(position("returned consumption"), position("wake apple"))
    }

    func testStopEndsASleepAtOnce() {
        let worker = SleepingWorker("sleeper", Journal(), sleep: .seconds(600))
        let threads = WorkerThreads(worker)
        threads.start()
        XCTAssertTrue(waitUntil { worker.rounds.load(ordering: .relaxed) >= 1 })
        let started = ContinuousClock.now
        threads.stop()
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
    }

    func testANudgeEndsTheSleepWithoutStopping() {
        let worker = SleepingWorker("nudged", Journal(), sleep: .seconds(600))
        let threads = WorkerThreads(worker)
        threads.start()
        defer { threads.stop() }
        XCTAssertTrue(waitUntil { worker.rounds.load(ordering: .relaxed) == 1 })
        threads.nudge()
        XCTAssertTrue(waitUntil { worker.rounds.load(ordering: .relaxed) == 2 })
    }

    func testEveryThreadOfAWorkerIsJoinedAndAStoppedWorkerRunsAgain() {
        let journal = Journal()
        let worker = SleepingWorker("many", journal, threads: 3)
        worker.whileRunning {
            XCTAssertTrue(waitUntil { journal.entries.count == 3 })
        }
        XCTAssertEqual(journal.entries.filter { $0 == "returned many" }.count, 3)
        worker.whileRunning {
            XCTAssertTrue(waitUntil { journal.entries.filter { $0 == "run many" }.count == 6 })
        }
        XCTAssertEqual(journal.entries.filter { $0 == "returned many" }.count, 6)
    }

    func testAStopTwiceJoinsOnce() {
        let journal = Journal()
        let threads = WorkerThreads(SleepingWorker("twice", journal))
        threads.start()
        threads.stop()
        threads.stop()
        XCTAssertEqual(journal.entries.filter { $0 == "returned twice" }.count, 1)
    }

    func testStoppingQueueConsumersClosesTheQueueOnceWhatItHeldIsDone() {
        let queue = WorkQueue<Int>(limit: QueueLimit())
        let done = Mutex<[Int]>([])
        let gate = DispatchSemaphore(value: 0)
        let consumers = QueueConsumers(named: "consumers", threads: 2, close: { queue.close() }) {
            while let job = queue.pop() {
                if job == 0 { gate.wait() }  // the first job holds its thread until the stop is under way
                done.withLock { $0.append(job) }
            }
        }
        let threads = WorkerThreads(consumers)
        threads.start()
        for job in 0..<5 { XCTAssertTrue(queue.push(job, bytes: 1)) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { gate.signal() }
        threads.stop()
        XCTAssertEqual(done.withLock { $0 }.sorted(), [0, 1, 2, 3, 4])
        XCTAssertNil(queue.pop())
    }

    /// Polls `condition` for up to 10 s.
    private func waitUntil(_ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            usleep(1000)
        }
        return condition()
    }
}

/// What the workers did, in order.
private final class Journal: Sendable {
    private let lines = Mutex<[String]>([])
    var entries: [String] { lines.withLock { $0 } }
    func add(_ line: String) { lines.withLock { $0.append(line) } }
}

/// Sleeps in rounds until stopped, as the outbox senders do.
private final class SleepingWorker: Worker {
    let threadName: String
    let threadCount: Int
    let rounds = Atomic<Int>(0)
    private let journal: Journal
    private let pause: Duration

    init(_ name: String, _ journal: Journal, threads: Int = 1, sleep: Duration = .milliseconds(5)) {
        threadName = name
        threadCount = threads
        self.journal = journal
        pause = sleep
    }

    func run(_ stop: StopRequest) {
        journal.add("run \(threadName)")
        while !stop.isRequested {
            rounds.add(1, ordering: .relaxed)
            stop.sleep(for: pause)
        }
        journal.add("returned \(threadName)")
    }

    func wake() {
        journal.add("wake \(threadName)")
    }
}
