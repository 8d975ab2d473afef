import Glibc

/// A boolean shared between threads, guarded by a mutex (no extra dependency
/// for one flag read once per accepted request).
final class AtomicFlag: @unchecked Sendable {
    private var value = false
    private var mutex = pthread_mutex_t()

    init() {
        pthread_mutex_init(&mutex, nil)
    }

    func load() -> Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return value
    }

    func store(_ newValue: Bool) {
        pthread_mutex_lock(&mutex)
        value = newValue
        pthread_mutex_unlock(&mutex)
    }
}
