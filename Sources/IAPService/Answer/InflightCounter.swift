import Glibc
import Synchronization

/// Counts requests accepted but not yet answered, so that a stopping service
/// can wait for them.
final class InflightCounter: Sendable {
    private let count = Atomic<Int>(0)

    func begin() { count.add(1, ordering: .relaxed) }
    func end() { count.subtract(1, ordering: .relaxed) }
    var current: Int { count.load(ordering: .relaxed) }

    /// Waits until nothing is in flight or `seconds` have passed; true if drained.
    func waitUntilIdle(seconds: Int) -> Bool {
        let deadline = SystemClock.monotonicNanoseconds() + UInt64(seconds) * 1_000_000_000
        while current > 0 {
            if SystemClock.monotonicNanoseconds() > deadline { return false }
            usleep(20_000)
        }
        return true
    }
}
