import Glibc

/// Time as the service needs it: monotonic for durations and timers, wall clock
/// (UTC milliseconds) for what is stored and answered. Not `Clock`: that is the standard
/// library's protocol of clocks, which `Duration` and `ContinuousClock` come with.
enum SystemClock {
    /// Nanoseconds on a clock that never jumps.
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Milliseconds since 1970 UTC.
    static func wallMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
