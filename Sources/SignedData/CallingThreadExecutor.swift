import Dispatch
import Synchronization

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
package final class CallingThreadExecutor<Result: Sendable>: TaskExecutor, Sendable {
    private let state = Mutex(Queue())
    /// Signalled once for each job or result that arrives: the calling thread sleeps on it while
    /// there is neither (a count, so that one arriving between its look and its sleep is not missed).
    private let ready = DispatchSemaphore(value: 0)

    private struct Queue {
        var jobs: [UnownedJob] = []
        var result: Result?
    }

    private init() {}

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
        state.withLock { $0.jobs.append(job) }
        ready.signal()
    }

    private func finish(with value: Result) {
        state.withLock { $0.result = value }
        ready.signal()
    }

    private enum Step {
        case run(UnownedJob)
        case done(Result)
    }

    /// The next job to run, or the result; sleeps while there is neither.
    private func nextStep() -> Step {
        while true {
            let step = state.withLock { queue -> Step? in
                if let result = queue.result { return .done(result) }
                return queue.jobs.isEmpty ? nil : .run(queue.jobs.removeFirst())
            }
            if let step { return step }
            ready.wait()
        }
    }
}
