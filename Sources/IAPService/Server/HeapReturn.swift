import CMalloc

/// Gives memory freed after a burst back to the system.
///
/// A burst of thousands of calls to Apple allocates TLS state and buffers on
/// every thread. iap-fcgi links jemalloc (`Sources/CMalloc`): with glibc's
/// malloc, the process kept what a burst freed in fragmented arenas, and the
/// requests after it paid for that (bench case e1 after g: 14% more CPU than
/// in a fresh process, most of it in `_int_malloc`), even with `malloc_trim`
/// every second. jemalloc returns pages unused for a second from its own
/// background thread, while the service is idle too.
enum HeapReturn {
    static let freedPagesReturnedAfterMs = 1000

    static func start() {
        guard CMalloc_jemalloc_serves_malloc() else {
            return Log.event("memory: malloc is not jemalloc's (preloaded?): freed memory is returned as that allocator does")
        }
        let failed = CMalloc_return_freed_pages_after(freedPagesReturnedAfterMs)
        if failed != 0 {
            Log.event("memory: jemalloc's decay not set (mallctl error \(failed)): freed memory is returned on its defaults")
        }
    }
}
