import Glibc

/// A first-in first-out queue of jobs that threads of our own wait on. (The
/// service never runs blocking C calls on Swift's cooperative pool.)
final class WorkQueue<Job>: @unchecked Sendable {
    private var jobs: [Job] = []
    private var head = 0
    private var closed = false
    private var mutex = pthread_mutex_t()
    private var available = pthread_cond_t()

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&available, nil)
    }

    func push(_ job: Job) {
        pthread_mutex_lock(&mutex)
        jobs.append(job)
        pthread_cond_signal(&available)
        pthread_mutex_unlock(&mutex)
    }

    /// The next job; nil once the queue is closed and empty.
    func pop() -> Job? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while head == jobs.count && !closed {
            pthread_cond_wait(&available, &mutex)
        }
        guard head < jobs.count else { return nil }
        let job = jobs[head]
        head += 1
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        }
        return job
    }

    /// Lets `pop` return nil once the queued jobs are done.
    func close() {
        pthread_mutex_lock(&mutex)
        closed = true
        pthread_cond_broadcast(&available)
        pthread_mutex_unlock(&mutex)
    }
}
