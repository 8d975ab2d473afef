import Glibc
import IAPCore

/// A first-in first-out queue of jobs that threads of our own wait on. (The
/// service never runs blocking C calls on Swift's cooperative pool.) It holds
/// at most what its `QueueLimit` allows: a job it cannot take is refused, and
/// the caller answers for it at once.
final class WorkQueue<Job>: @unchecked Sendable {
    /// Jobs in order, what each holds, and the limit; taken jobs let go at once.
    private var jobs: BoundedFIFO<Job>
    private var closed = false
    private var mutex = pthread_mutex_t()
    private var available = pthread_cond_t()
    /// Signalled while more than `backlogThreshold` jobs wait: wakes `popBacklog` callers.
    private var backlogged = pthread_cond_t()
    private let backlogThreshold: Int
    /// The `queue` label of its depth and rejections in the metrics; nil: not in them (iapctl's own queues).
    private let name: String?

    /// `backlogThreshold`: how many waiting jobs make `popBacklog` hand one out.
    init(limit: QueueLimit, name: String? = nil, backlogThreshold: Int = .max) {
        self.jobs = BoundedFIFO(limit: limit)
        self.name = name
        self.backlogThreshold = backlogThreshold
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&available, nil)
        pthread_cond_init(&backlogged, nil)
        if let name {
            ServiceMetrics.watchQueue(name) { [weak self] in self?.count ?? 0 }
        }
    }

    /// Jobs waiting now.
    var count: Int {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return jobs.count
    }

    /// Queues `job`, which holds `bytes` of receipts and answers; false when the
    /// queue is full and the job was not taken.
    func push(_ job: Job, bytes: Int) -> Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        guard jobs.push(job, bytes: bytes) else {
            if let name { ServiceMetrics.queueRejected(name) }
            return false
        }
        pthread_cond_signal(&available)
        if jobs.count > backlogThreshold {
            pthread_cond_signal(&backlogged)
        }
        return true
    }

    /// The next job; nil once the queue is closed and empty.
    func pop() -> Job? {
        pop(upTo: 1)?.first
    }

    /// The next jobs, at least one and at most `limit`: all that wait, for a
    /// consumer that does them together. Nil once the queue is closed and empty.
    func pop(upTo limit: Int) -> [Job]? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while jobs.count == 0 && !closed {
            pthread_cond_wait(&available, &mutex)
        }
        return jobs.count == 0 ? nil : jobs.take(upTo: limit)
    }

    /// Like `pop(upTo:)`, but only while more than `backlogThreshold` jobs wait:
    /// for threads that help only when the queue backs up. Nil once the queue is closed.
    func popBacklog(upTo limit: Int) -> [Job]? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while jobs.count <= backlogThreshold && !closed {
            pthread_cond_wait(&backlogged, &mutex)
        }
        return closed ? nil : jobs.take(upTo: limit)
    }

    /// Lets `pop` return nil once the queued jobs are done.
    func close() {
        pthread_mutex_lock(&mutex)
        closed = true
        pthread_cond_broadcast(&available)
        pthread_cond_broadcast(&backlogged)
        pthread_mutex_unlock(&mutex)
    }
}
