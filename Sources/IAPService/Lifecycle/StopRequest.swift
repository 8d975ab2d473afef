import Dispatch
import Synchronization

/// Whether a worker was asked to stop, and the sleep between its rounds that the request ends.
final class StopRequest: Sendable {
    private let requested = Atomic<Bool>(false)
    private let wakeUp = DispatchSemaphore(value: 0)

    var isRequested: Bool { requested.load(ordering: .acquiring) }

    /// Asks the worker to stop and ends its `sleep`.
    func request() {
        requested.store(true, ordering: .releasing)
        wakeUp.signal()
    }

    /// Ends the current or next `sleep` early without stopping: new work to look at.
    func nudge() {
        wakeUp.signal()
    }

    /// Waits `duration`, or less when a stop or a nudge comes.
    func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = Int(clamping: seconds) &* 1_000_000_000 &+ Int(attoseconds / 1_000_000_000)
        _ = wakeUp.wait(timeout: .now() + .nanoseconds(max(nanoseconds, 0)))
    }
}
