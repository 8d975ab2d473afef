import Glibc

/// Each request waiting on Apple holds two sockets (nginx's and Apple's), so
/// thousands of them need more descriptors than the usual soft limit of 1024.
enum FileDescriptorLimit {
    /// Raises the soft limit to the hard limit; returns the limit now in force.
    @discardableResult
    static func raiseToMaximum() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return UInt64(limit.rlim_cur)
    }
}
