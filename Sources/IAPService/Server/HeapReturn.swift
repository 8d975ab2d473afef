import CMalloc
import Glibc

/// Gives memory freed after a burst back to the system.
///
/// A burst of thousands of calls to Apple allocates TLS state and buffers on
/// every thread; glibc keeps what they free in per-thread arenas, so without
/// this the process stays at its peak size for good (seen: 247 MiB after one
/// 2,000-connection burst, 399 MiB after three). Two arenas bound how much
/// freed memory can sit idle, and a periodic `malloc_trim` hands free pages back.
enum HeapReturn {
    static let arenas: Int32 = 2
    static let trimIntervalSeconds: UInt32 = 5

    /// Call before starting threads: the arena limit applies to threads made after it.
    static func start() {
        _ = mallopt(M_ARENA_MAX, arenas)
        startThread {
            while true {
                sleep(trimIntervalSeconds)
                _ = malloc_trim(0)
            }
        }
    }
}
