import CFastCGI
import Glibc
import Synchronization

/// The kept connections waiting in the epoll set for nginx's next request, at
/// most `limit` of them: parking one more closes the one idle longest, which
/// nginx, reusing its most recent connections first, is the least likely to
/// want. Whoever takes one from here owns it; a stopping listener closes the rest.
final class IdleConnections: Sendable {
    private let limit: Int
    private let state = Mutex(Parked())

    init(limit: Int) {
        precondition(limit > 0, "a listener keeps at least one idle connection")
        self.limit = limit
    }

    /// Puts `connection` in the set and arms it for one wake-up; after
    /// `closeAll()` it is closed instead. Arming under the lock keeps a
    /// concurrent `closeAll()` from closing it first.
    func park(_ connection: Int32, poller: Int32) {
        state.withLock { parked in
            guard !parked.isClosed, CFastCGI_epoll_arm_once(poller, connection) == 0 else {
                close(connection)
                return
            }
            parked.add(connection)
            while parked.parkedAt.count > limit { parked.closeOldest() }
            parked.dropStaleParkings()
        }
    }

    /// Takes `connection`, which epoll reported ready; false when it is no
    /// longer here (closed as the oldest, or by `closeAll()`).
    func take(_ connection: Int32) -> Bool {
        state.withLock { $0.parkedAt.removeValue(forKey: connection) != nil }
    }

    func closeAll() {
        state.withLock { parked in
            parked.parkedAt.keys.forEach { close($0) }
            parked = Parked(isClosed: true)
        }
    }

    /// The idle connections, under the lock.
    private struct Parked {
        /// Each idle connection and when it was parked (a sequence number).
        var parkedAt: [Int32: UInt64] = [:]
        /// Parkings oldest first, from `oldest` on; an entry whose connection was
        /// taken since (or parked again, with a newer number) is skipped.
        var parkings: [(connection: Int32, sequence: UInt64)] = []
        var oldest = 0
        var nextSequence: UInt64 = 0
        var isClosed = false

        mutating func add(_ connection: Int32) {
            parkedAt[connection] = nextSequence
            parkings.append((connection, nextSequence))
            nextSequence += 1
        }

        /// Closing takes the connection out of the epoll set too.
        mutating func closeOldest() {
            while oldest < parkings.count {
                let parking = parkings[oldest]
                oldest += 1
                if parkedAt[parking.connection] == parking.sequence {
                    parkedAt[parking.connection] = nil
                    close(parking.connection)
                    return
                }
            }
        }

        /// Keeps `parkings` within twice the idle connections (and some), so that it
        /// does not grow with every request: amortised, a constant cost per parking.
        mutating func dropStaleParkings() {
            guard parkings.count - oldest > 2 * parkedAt.count + 64 else { return }
            parkings = parkings[oldest...].filter { parkedAt[$0.connection] == $0.sequence }
            oldest = 0
        }
    }
}
