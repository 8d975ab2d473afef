import IAPCore

/// A first-in first-out queue of jobs that threads of our own wait on. (The
/// service never runs blocking C calls on Swift's cooperative pool.) It holds
/// at most what its `QueueLimit` allows: a job it cannot take is refused, and
/// the caller answers for it at once.
final class WorkQueue<Job>: @unchecked Sendable {
    /// Jobs in order, what each holds, and the limit; taken jobs let go at once.
    private var jobs: BoundedFIFO<Job>
    private var closed = false
    /// Guards `jobs` and `closed`.
    private let lock = ConditionLock()
    private let available = ConditionLock.Condition()
    /// Signalled while more than `backlogThreshold` jobs wait: wakes `popBacklog` callers.
    private let backlogged = ConditionLock.Condition()
    private let backlogThreshold: Int
    /// The `queue` label of its depth and rejections in the metrics; nil: not in them (iapctl's own queues).
    private let name: String?

    /// `backlogThreshold`: how many waiting jobs make `popBacklog` hand one out.
    init(limit: QueueLimit, name: String? = nil, backlogThreshold: Int = .max) {
        self.jobs = BoundedFIFO(limit: limit)
        self.name = name
        self.backlogThreshold = backlogThreshold
        if let name {
            ServiceMetrics.watchQueue(name) { [weak self] in self?.count ?? 0 }
        }
    }

    /// Jobs waiting now.
    var count: Int {
        lock.withLock { jobs.count }
    }

    /// Queues `job`, which holds `bytes` of receipts and answers; false when the
    /// queue is full and the job was not taken.
    func push(_ job: Job, bytes: Int) -> Bool {
        lock.withLock {
            guard jobs.push(job, bytes: bytes) else {
                if let name { ServiceMetrics.queueRejected(name) }
                return false
            }
            available.signal()
            if jobs.count > backlogThreshold {
                backlogged.signal()
            }
            return true
        }
    }

    /// The next job; nil once the queue is closed and empty.
    func pop() -> Job? {
        pop(upTo: 1)?.first
    }

    /// The next jobs, at least one and at most `limit`: all that wait, for a
    /// consumer that does them together. Nil once the queue is closed and empty.
    func pop(upTo limit: Int) -> [Job]? {
        lock.withLock {
            while jobs.count == 0 && !closed {
                available.wait(releasing: lock)
            }
            return jobs.count == 0 ? nil : jobs.take(upTo: limit)
        }
    }

    /// Like `pop(upTo:)`, but only while more than `backlogThreshold` jobs wait:
    /// for threads that help only when the queue backs up. Nil once the queue is closed.
    func popBacklog(upTo limit: Int) -> [Job]? {
        lock.withLock {
            while jobs.count <= backlogThreshold && !closed {
                backlogged.wait(releasing: lock)
            }
            return closed ? nil : jobs.take(upTo: limit)
        }
    }

    /// Lets `pop` return nil once the queued jobs are done.
    func close() {
        lock.withLock {
            closed = true
            available.broadcast()
            backlogged.broadcast()
        }
    }
}
