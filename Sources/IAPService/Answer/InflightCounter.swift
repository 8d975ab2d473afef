import Glibc

/// Counts requests accepted but not yet answered, so that a stopping service
/// can wait for them.
final class InflightCounter: @unchecked Sendable {
    private let count = Locked(0)

    func begin() { count.withLock { $0 += 1 } }
    func end() { count.withLock { $0 -= 1 } }
    var current: Int { count.withLock { $0 } }

    /// Waits until nothing is in flight or `seconds` have passed; true if drained.
    func waitUntilIdle(seconds: Int) -> Bool {
        let deadline = Clock.monotonicNanoseconds() + UInt64(seconds) * 1_000_000_000
        while current > 0 {
            if Clock.monotonicNanoseconds() > deadline { return false }
            usleep(20_000)
        }
        return true
    }
}
