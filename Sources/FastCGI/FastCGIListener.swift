import CFastCGI
import Glibc
import Synchronization

/// The socket nginx connects to: inherited on fd 0 (spawn-fcgi, systemd), or
/// one that the process opens itself.
///
/// Connections are kept between requests when nginx asks for it
/// (`fastcgi_keep_conn on` with an upstream `keepalive` pool): no connect,
/// accept and lingering close per request. A kept connection waits for its
/// next request in an epoll set that every accept thread waits on, so an idle
/// connection holds no thread, and a thread is never stuck on a connection
/// nginx does not use while others queue.
public final class FastCGIListener: Sendable {
    private let listening: ListeningSocket
    /// The listening socket, the kept connections and the stop pipe's read end.
    private let poller: Int32
    private let stopPipe: (read: Int32, write: Int32)
    private let idle: IdleConnections

    /// Sets up libfcgi once per process (it must run before the first request).
    private static let libraryInitialised: Bool = FCGX_Init() == 0

    /// Uses the socket the process was started with on fd 0.
    public static func inherited(policy: ConnectionPolicy) throws(FastCGIError) -> FastCGIListener {
        try FastCGIListener(descriptor: 0, origin: .inherited, policy: policy)
    }

    /// Opens `host:port` or a unix socket path. A unix socket gets mode 0660
    /// (owner and group: give nginx's user the group), replacing a stale file.
    public static func open(
        _ address: String, backlog: Int32 = 4096, isUnixPath: Bool, policy: ConnectionPolicy
    ) throws(FastCGIError) -> FastCGIListener {
        guard libraryInitialised else { throw FastCGIError(function: "FCGX_Init", code: -1) }
        if isUnixPath { unlink(address) }
        let descriptor = FCGX_OpenSocket(address, backlog)
        guard descriptor >= 0 else { throw FastCGIError(function: "FCGX_OpenSocket", code: descriptor) }
        if isUnixPath { chmod(address, 0o660) }
        return try FastCGIListener(
            descriptor: descriptor, origin: .opened(unixPath: isUnixPath ? address : nil), policy: policy)
    }

    private init(descriptor: Int32, origin: ListeningSocket.Origin, policy: ConnectionPolicy) throws(FastCGIError) {
        guard FastCGIListener.libraryInitialised else { throw FastCGIError(function: "FCGX_Init", code: -1) }
        poller = CFastCGI_epoll_create()
        var ends: [Int32] = [-1, -1]
        guard poller >= 0, pipe(&ends) == 0 else { throw FastCGIError(function: "epoll_create1", code: errno) }
        stopPipe = (ends[0], ends[1])
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        guard CFastCGI_epoll_watch_always(poller, stopPipe.read) == 0 else {
            throw FastCGIError(function: "epoll_ctl", code: errno)
        }
        listening = try ListeningSocket(descriptor: descriptor, origin: origin, poller: poller, policy: policy)
        idle = IdleConnections(limit: policy.idleLimit)
    }

    /// The IP address the listening socket is bound to (4 or 16 bytes); nil for a unix socket.
    public var localAddress: [UInt8]? { listening.localAddress }

    /// Waits for the next request, on a new connection or a kept one. Returns
    /// nil once `stopAccepting()` was called. Safe to call from several threads
    /// at once, each getting its own request.
    public func accept() -> FastCGIExchange? {
        while !FastCGIListener.isStopping.load(ordering: .acquiring) {
            // The timeout only bounds how long a thread takes to see the stop flag.
            let ready = CFastCGI_epoll_wait_one(poller, 1000)
            if ready < 0 || ready == stopPipe.read { continue }
            if ready == listening.descriptor {
                // Read only once its request arrives: a peer that connects and sends
                // nothing waits in the poller like a kept connection, holding no thread.
                if let connection = listening.acceptConnection() { keep(connection) }
                continue
            }
            if idle.take(ready), let exchange = readRequest(on: ready) {
                return exchange
            }
        }
        return nil
    }

    /// Reads the next request from `connection`. On a connection nginx has
    /// closed (or that breaks the protocol) libfcgi closes it and, having no
    /// listening socket in this request, returns an error instead of accepting.
    private func readRequest(on connection: Int32) -> FastCGIExchange? {
        let request = UnsafeMutablePointer<FCGX_Request>.allocate(capacity: 1)
        FCGX_InitRequest(request, -1, 0)
        request.pointee.ipcFd = connection
        // Marked kept, so that FCGX_Accept_r's finish of a "previous request" leaves it open.
        request.pointee.keepConnection = 1
        if FCGX_Accept_r(request) == 0 {
            return FastCGIExchange(request: request, listener: self)
        }
        FCGX_Free(request, 1)
        request.deallocate()
        return nil
    }

    /// A connection waiting for its next request (or, new, for its first).
    func keep(_ connection: Int32) {
        idle.park(connection, poller: poller)
    }

    /// Makes threads blocked in `accept()` return nil, stops taking connections
    /// (see `ListeningSocket.stop()`: an inherited socket stays open for the next
    /// process) and closes the kept ones that are idle (nginx sends its next
    /// request on a new connection). Requests being answered finish; their
    /// connections close then.
    public func stopAccepting() {
        FastCGIListener.isStopping.store(true, ordering: .releasing)
        FCGX_ShutdownPending()
        listening.stop()
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        idle.closeAll()
    }

    private static let isStopping = Atomic<Bool>(false)
}
