import Glibc
import Synchronization

/// A worker's threads: started once, and stopped once by asking the worker to stop, waking it
/// and waiting for every thread to return. Waiting matters: a process that exits while a thread
/// still closes its TLS connections runs OpenSSL's and libmariadb's exit handlers beside it.
final class WorkerThreads: Sendable {
    let worker: any Worker
    private let stopRequest = StopRequest()
    private let threads = Mutex<[pthread_t]>([])

    init(_ worker: any Worker) {
        self.worker = worker
    }

    func start() {
        let started = (0..<worker.threadCount).map { _ in
            startThread(named: worker.threadName) { [worker, stopRequest] in worker.run(stopRequest) }
        }
        threads.withLock { $0 += started }
    }

    /// Tells `run` more work waits (ends its sleep early).
    func nudge() {
        stopRequest.nudge()
    }

    /// Returns once every thread has finished what it held; a second call returns at once.
    func stop() {
        stopRequest.request()
        worker.wake()
        for thread in threads.withLock({ running in defer { running.removeAll() }; return running }) {
            joinThread(thread)
        }
    }
}
