import Glibc

/// Runs an async operation to completion on the calling thread.
///
/// swift-certificates' path validation (`Verifier.validate`) is async, though
/// with in-memory stores and no OCSP it never waits on anything: it is CPU work
/// from start to end. The service calls it from its own threads, which are not
/// Swift's cooperative pool and have nothing else to do meanwhile. So rather
/// than hand the work to the pool and block on a semaphore (two thread switches
/// and a pool thread woken per call), the task is given this executor as its
/// preference: every job of it is queued here, and the calling thread runs the
/// queue until the result is in. The cooperative pool is never used, hence
/// never blocked. Should a job ever be queued from another thread (an
/// operation that really waited on something), the caller sleeps until it is.
package final class CallingThreadExecutor<Result: Sendable>: TaskExecutor, @unchecked Sendable {
    // Guarded by `mutex`; `ready` is signalled when a job or the result arrives.
    private var jobs: [UnownedJob] = []
    private var result: Result?
    private var mutex = pthread_mutex_t()
    private var ready = pthread_cond_t()

    private init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&ready, nil)
    }

    deinit {
        pthread_cond_destroy(&ready)
        pthread_mutex_destroy(&mutex)
    }

    /// `operation`'s result, computed on this thread.
    package static func run(_ operation: @escaping @Sendable () async -> Result) -> Result {
        let executor = CallingThreadExecutor()
        Task(executorPreference: executor) {
            executor.finish(with: await operation())
        }
        while true {
            switch executor.nextStep() {
            case .run(let job): job.runSynchronously(on: executor.asUnownedTaskExecutor())
            case .done(let value): return value
            }
        }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        locked { jobs.append(job) }
    }

    private func finish(with value: Result) {
        locked { result = value }
    }

    private enum Step {
        case run(UnownedJob)
        case done(Result)
    }

    /// The next job to run, or the result; sleeps while there is neither.
    private func nextStep() -> Step {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while true {
            if let result { return .done(result) }
            if !jobs.isEmpty { return .run(jobs.removeFirst()) }
            pthread_cond_wait(&ready, &mutex)
        }
    }

    private func locked(_ change: () -> Void) {
        pthread_mutex_lock(&mutex)
        change()
        pthread_cond_signal(&ready)
        pthread_mutex_unlock(&mutex)
    }
}
