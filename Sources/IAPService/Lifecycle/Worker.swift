/// A job that runs in the background on threads of its own until it is asked to stop: an outbox
/// sender, Apple's client, a queue's consumers. The service's blocking calls (libfcgi, libcurl,
/// MariaDB) run on such threads, never on Swift's cooperative pool, so a worker is a thread body
/// rather than an async `run` (swift-service-lifecycle's `Service`, whose `ServiceGroup` this
/// follows: `WorkerGroup`).
///
/// A worker holds no thread itself: `WorkerThreads` starts its `run` and stops it, once each.
protocol Worker: AnyObject, Sendable {
    /// What its threads are called in `top -H`, `ps -L` and `perf` (at most 15 bytes).
    var threadName: String { get }
    /// Threads running `run` at once.
    var threadCount: Int { get }
    /// The thread's body: works until `stop.isRequested`, then finishes what it holds and
    /// returns. It sleeps in `stop.sleep(for:)`, which a stop ends, or in a wait of its own that
    /// `wake` ends.
    func run(_ stop: StopRequest)
    /// Ends a wait of `run`'s own (a libcurl poll, a queue's wait) so that it sees the stop. Called
    /// after the stop is requested, before the threads are joined.
    func wake()
}

extension Worker {
    var threadCount: Int { 1 }
    func wake() {}

    /// Runs `body` with the worker's threads started, and stops them after (a one-off command's
    /// client). Each call starts them anew.
    func whileRunning<Answer>(_ body: () throws -> Answer) rethrows -> Answer {
        let threads = WorkerThreads(self)
        threads.start()
        defer { threads.stop() }
        return try body()
    }
}
