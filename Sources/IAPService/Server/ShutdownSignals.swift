import Glibc

/// SIGTERM and SIGINT, taken synchronously: blocked in every thread (create this
/// before starting any) and waited for by the main thread. SIGPIPE is ignored:
/// a client that went away is an error on its own socket, not a reason to die.
struct ShutdownSignals {
    private var set = sigset_t()

    init() {
        signal(SIGPIPE, SIG_IGN)
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Blocks until one of the signals arrives; returns its number.
    func wait() -> Int32 {
        var received: Int32 = 0
        var set = self.set
        sigwait(&set, &received)
        return received
    }
}
