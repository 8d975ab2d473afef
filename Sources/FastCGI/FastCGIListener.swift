import CFastCGI
import Glibc

/// The socket nginx connects to: inherited on fd 0 (spawn-fcgi, systemd), or
/// one that the process opens itself.
public final class FastCGIListener: Sendable {
    /// The listening socket's descriptor.
    public let descriptor: Int32
    private let unixPath: String?

    /// Sets up libfcgi once per process (it must run before the first request).
    private static let libraryInitialised: Bool = FCGX_Init() == 0

    /// Uses the socket the process was started with on fd 0.
    public static func inherited() throws(FastCGIError) -> FastCGIListener {
        try FastCGIListener(descriptor: 0, unixPath: nil)
    }

    /// Opens `host:port` or a unix socket path. A unix socket gets mode 0660
    /// (owner and group: give nginx's user the group), replacing a stale file.
    public static func open(_ address: String, backlog: Int32 = 4096, isUnixPath: Bool) throws(FastCGIError)
        -> FastCGIListener
    {
        guard libraryInitialised else { throw FastCGIError(function: "FCGX_Init", code: -1) }
        if isUnixPath { unlink(address) }
        let descriptor = FCGX_OpenSocket(address, backlog)
        guard descriptor >= 0 else { throw FastCGIError(function: "FCGX_OpenSocket", code: descriptor) }
        if isUnixPath { chmod(address, 0o660) }
        return try FastCGIListener(descriptor: descriptor, unixPath: isUnixPath ? address : nil)
    }

    private init(descriptor: Int32, unixPath: String?) throws(FastCGIError) {
        guard FastCGIListener.libraryInitialised else { throw FastCGIError(function: "FCGX_Init", code: -1) }
        self.descriptor = descriptor
        self.unixPath = unixPath
    }

    /// Waits for the next request. Returns nil once `stopAccepting()` was called.
    /// Safe to call from several threads at once, each getting its own request.
    public func accept() -> FastCGIExchange? {
        let request = UnsafeMutablePointer<FCGX_Request>.allocate(capacity: 1)
        FCGX_InitRequest(request, descriptor, FCGI_FAIL_ACCEPT_ON_INTR)
        while true {
            if FCGX_Accept_r(request) == 0 {
                return FastCGIExchange(request: request)
            }
            // accept failed: a signal, a client that went away, or shutdown.
            if FastCGIListener.isStopping.load() {
                FCGX_Free(request, 1)
                request.deallocate()
                return nil
            }
        }
    }

    /// Makes threads blocked in `accept()` return nil, and stops taking connections.
    public func stopAccepting() {
        FastCGIListener.isStopping.store(true)
        FCGX_ShutdownPending()
        shutdown(descriptor, Int32(SHUT_RDWR))
        if let unixPath { unlink(unixPath) }
    }

    private static let isStopping = AtomicFlag()
}
