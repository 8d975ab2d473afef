import Glibc

/// A pthread mutex with condition variables that threads sleep on until another signals: a
/// queue's consumers. Synchronization's `Mutex` has no condition variable, so these stay pthread
/// objects, each in memory allocated for it once: a pthread object must not move, and Swift
/// promises no stable address for a stored property.
final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// A condition to wait on under this lock.
    final class Condition: @unchecked Sendable {
        private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

        init() {
            pthread_cond_init(condition, nil)
        }

        deinit {
            pthread_cond_destroy(condition)
            condition.deallocate()
        }

        /// Releases `lock`, which the caller holds (inside `withLock`), until signalled; holds it again on return.
        func wait(releasing lock: ConditionLock) {
            pthread_cond_wait(condition, lock.mutex)
        }

        func signal() {
            pthread_cond_signal(condition)
        }

        func broadcast() {
            pthread_cond_broadcast(condition)
        }
    }
}
