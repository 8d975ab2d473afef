import CFastCGI
import Glibc

/// The kept connections waiting in the epoll set for nginx's next request, at
/// most `limit` of them: parking one more closes the one idle longest, which
/// nginx, reusing its most recent connections first, is the least likely to
/// want. Whoever takes one from here owns it; a stopping listener closes the rest.
final class IdleConnections: @unchecked Sendable {
    private let limit: Int
    /// Each idle connection and when it was parked (a sequence number).
    private var parkedAt: [Int32: UInt64] = [:]
    /// Parkings oldest first, from `oldest` on; an entry whose connection was
    /// taken since (or parked again, with a newer number) is skipped.
    private var parkings: [(connection: Int32, sequence: UInt64)] = []
    private var oldest = 0
    private var nextSequence: UInt64 = 0
    private var isClosed = false
    private var mutex = pthread_mutex_t()

    init(limit: Int) {
        precondition(limit > 0, "a listener keeps at least one idle connection")
        self.limit = limit
        pthread_mutex_init(&mutex, nil)
    }

    /// Puts `connection` in the set and arms it for one wake-up; after
    /// `closeAll()` it is closed instead. Arming under the lock keeps a
    /// concurrent `closeAll()` from closing it first.
    func park(_ connection: Int32, poller: Int32) {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        guard !isClosed, CFastCGI_epoll_arm_once(poller, connection) == 0 else {
            close(connection)
            return
        }
        parkedAt[connection] = nextSequence
        parkings.append((connection, nextSequence))
        nextSequence += 1
        while parkedAt.count > limit { closeOldest() }
        dropStaleParkings()
    }

    /// Takes `connection`, which epoll reported ready; false when it is no
    /// longer here (closed as the oldest, or by `closeAll()`).
    func take(_ connection: Int32) -> Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return parkedAt.removeValue(forKey: connection) != nil
    }

    func closeAll() {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        isClosed = true
        parkedAt.keys.forEach { close($0) }
        parkedAt.removeAll()
        parkings.removeAll()
        oldest = 0
    }

    // Under the mutex. Closing takes the connection out of the epoll set too.
    private func closeOldest() {
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
    private func dropStaleParkings() {
        guard parkings.count - oldest > 2 * parkedAt.count + 64 else { return }
        parkings = parkings[oldest...].filter { parkedAt[$0.connection] == $0.sequence }
        oldest = 0
    }
}
