import CFastCGI
import Glibc

/// The kept connections waiting in the epoll set for nginx's next request.
/// Whoever takes one from here owns it; a stopping listener closes the rest.
final class IdleConnections: @unchecked Sendable {
    private var descriptors = Set<Int32>()
    private var isClosed = false
    private var mutex = pthread_mutex_t()

    init() {
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
        descriptors.insert(connection)
    }

    /// Takes `connection`, which epoll reported ready; false when it is no
    /// longer here (`closeAll()` closed it).
    func take(_ connection: Int32) -> Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return descriptors.remove(connection) != nil
    }

    func closeAll() {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        isClosed = true
        descriptors.forEach { close($0) }
        descriptors.removeAll()
    }
}
