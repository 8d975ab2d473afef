import CMalloc
import Glibc

/// Gives memory freed after a burst back to the system.
///
/// A burst of thousands of calls to Apple allocates TLS state and buffers on
/// every thread; glibc keeps what they free in its arenas, so the process stayed
/// at its peak size and grew from burst to burst (three 30 s runs at 2,000 calls
/// in flight left it at 236, 286 and 435 MiB). `malloc_trim` every few seconds
/// hands the free pages back: 156, 162 and 166 MiB ten seconds after the same
/// runs. Every second rather than every 5 also lowers the peak during a burst
/// (2,000 calls in flight over HTTP/2: 156 against 158-166 MiB, two runs each),
/// as what one wave of calls freed is returned before the next allocates.
/// (Capping glibc at two arenas gave the same figures and cost throughput in
/// lock contention, so arenas are left as they are.)
enum HeapReturn {
    static let trimIntervalSeconds: UInt32 = 1

    static func start() {
        startThread {
            while true {
                sleep(trimIntervalSeconds)
                _ = malloc_trim(0)
            }
        }
    }
}
