import CCurl
import Glibc

/// libcurl's multi interface driven by epoll through `curl_multi_socket_action`:
/// many transfers on one thread, each waiting on the network without a thread
/// of its own, and the work per wake-up proportional to the sockets that are
/// ready, not to the transfers under way (curl_multi_perform and
/// curl_multi_poll walk every transfer on every call; at thousands of calls to
/// Apple at once that walk is what the CPU would do).
///
/// Only `wakeUp()` may be called from other threads; everything else belongs to
/// the driving thread.
public final class CurlMulti {
    private let handle: UnsafeMutableRawPointer
    private let epoll: Int32
    /// A pipe whose read end is in the epoll set: a byte written wakes `wait`.
    private let wakePipe: (read: Int32, write: Int32)
    private var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Connections libcurl closed, named as `CurlTransfer.Connection.key`.
    private let closedConnections = ClosedConnections()
    /// What each socket is registered for in the epoll set (`CURL_POLL_IN`, `_OUT`
    /// or `_INOUT`). libcurl reports a shared HTTP/2 connection's socket again
    /// for every transfer added to it, mostly unchanged: those cost no `epoll_ctl`.
    private var watched: [Int32: Int32] = [:]
    /// When curl wants `socket_action(CURL_SOCKET_TIMEOUT)`; nil: no timer.
    private var timerDeadline: UInt64?
    /// What one `wait` found ready, kept between calls.
    private var readyDescriptors = [Int32](repeating: 0, count: 512)
    private var readyFlags = [Int32](repeating: 0, count: 512)

    /// `maxConnections`: kept-alive connections held for reuse. libcurl's
    /// default, 4 per transfer added at the moment, shrinks as calls finish and
    /// closes connections the next burst must open again with a TLS handshake
    /// (seen: ~3% of calls paying one at 64 calls at once, steady).
    /// `maxStreamsPerConnection`: requests one HTTP/2 connection carries at once.
    public init(maxConnections: Int, maxStreamsPerConnection: Int = 100) throws(CurlError) {
        guard curlInitialised, let handle = curl_multi_init() else {
            throw CurlError(function: "curl_multi_init", code: -1, message: "libcurl could not be initialised")
        }
        self.handle = handle
        epoll = CCurl_epoll_create()
        var ends: [Int32] = [-1, -1]
        guard epoll >= 0, pipe(&ends) == 0 else {
            throw CurlError(function: "epoll_create1", code: errno, message: String(cString: strerror(errno)))
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakePipe = (ends[0], ends[1])
        _ = CCurl_epoll_watch(epoll, wakePipe.read, 1, 0, 1)

        try CurlError.check(CCurl_multi_setopt_long(handle, CURLMOPT_MAXCONNECTS, maxConnections), "CURLMOPT_MAXCONNECTS")
        try CurlError.check(
            CCurl_multi_setopt_long(handle, CURLMOPT_MAX_CONCURRENT_STREAMS, maxStreamsPerConnection),
            "CURLMOPT_MAX_CONCURRENT_STREAMS")
        let context = Unmanaged.passUnretained(self).toOpaque()
        try CurlError.check(CCurl_multi_setopt_pointer(handle, CURLMOPT_SOCKETDATA, context), "CURLMOPT_SOCKETDATA")
        try CurlError.check(CCurl_multi_setopt_pointer(handle, CURLMOPT_TIMERDATA, context), "CURLMOPT_TIMERDATA")
        try CurlError.check(
            CCurl_multi_setopt_socket_function(handle) { _, socket, what, context, _ in
                Unmanaged<CurlMulti>.fromOpaque(context!).takeUnretainedValue().watch(socket, what)
                return 0
            }, "CURLMOPT_SOCKETFUNCTION")
        try CurlError.check(
            CCurl_multi_setopt_timer_function(handle) { _, timeoutMs, context in
                Unmanaged<CurlMulti>.fromOpaque(context!).takeUnretainedValue().setTimer(timeoutMs)
                return 0
            }, "CURLMOPT_TIMERFUNCTION")
    }

    deinit {
        for transfer in running.values {
            curl_multi_remove_handle(handle, transfer.handle)
        }
        curl_multi_cleanup(handle)
        close(epoll)
        close(wakePipe.read)
        close(wakePipe.write)
    }

    /// The number of transfers under way.
    public var count: Int { running.count }

    /// Starts a prepared transfer.
    public func add(_ transfer: CurlTransfer) throws(CurlError) {
        // A connection keeps the close callback of the transfer that opened it.
        try CurlError.check(
            CCurl_easy_setopt_pointer(transfer.handle, CURLOPT_CLOSESOCKETDATA, Unmanaged.passUnretained(closedConnections).toOpaque()),
            "CURLOPT_CLOSESOCKETDATA")
        try CurlError.check(
            CCurl_easy_setopt_close_socket_function(transfer.handle) { context, socket in
                let closed = Unmanaged<ClosedConnections>.fromOpaque(context!).takeUnretainedValue()
                var key = [CChar](repeating: 0, count: 80)
                if CCurl_socket_connection_key(socket, &key, key.count) != 0 {
                    closed.keys.append(String(decoding: key.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self))
                }
                closed.sockets.append(socket)
                return close(socket)
            }, "CURLOPT_CLOSESOCKETFUNCTION")
        try CurlError.check(curl_multi_add_handle(handle, transfer.handle), "curl_multi_add_handle")
        running[transfer.handle] = transfer
    }

    /// Runs curl's timer if it is due, and returns the transfers that finished,
    /// with how they ended.
    public func perform() throws(CurlError) -> [(CurlTransfer, CurlTransfer.Outcome)] {
        if let deadline = timerDeadline, deadline <= Self.now() {
            timerDeadline = nil
            try socketAction(CURL_SOCKET_TIMEOUT, 0)
        }
        var finished: [(CurlTransfer, CurlTransfer.Outcome)] = []
        var queued: Int32 = 0
        while let message = curl_multi_info_read(handle, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                  let transfer = running.removeValue(forKey: easy)
            else { continue }
            let code = message.pointee.data.result
            curl_multi_remove_handle(handle, easy)
            finished.append((transfer, transfer.outcome(of: code)))
        }
        return finished
    }

    /// Waits until a socket is ready, curl's timer is due, `wakeUp()` is called,
    /// or `timeoutMs` pass; then lets curl work on the ready sockets.
    public func wait(timeoutMs: Int32) throws(CurlError) {
        var timeout = timeoutMs
        if let deadline = timerDeadline {
            let now = Self.now()
            timeout = deadline <= now ? 0 : min(timeout, Int32(clamping: (deadline - now + 999_999) / 1_000_000))
        }
        let ready = Int(CCurl_epoll_wait(epoll, &readyDescriptors, &readyFlags, Int32(readyDescriptors.count), timeout))
        for index in 0..<max(ready, 0) {
            if readyDescriptors[index] == wakePipe.read {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wakePipe.read, &drain, drain.count) > 0 {}
            } else {
                try socketAction(readyDescriptors[index], readyFlags[index])
            }
        }
    }

    /// The connections libcurl closed since the last call (`CurlTransfer.Connection.key`).
    public func takeClosedConnections() -> [String] {
        defer { closedConnections.keys.removeAll() }
        return closedConnections.keys
    }

    /// Ends a `wait` early. Safe from any thread.
    public func wakeUp() {
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
    }

    private func socketAction(_ socket: curl_socket_t, _ flags: Int32) throws(CurlError) {
        var stillRunning: Int32 = 0
        try CurlError.check(curl_multi_socket_action(handle, socket, flags, &stillRunning), "curl_multi_socket_action")
    }

    /// curl's socket callback: which events to wait for on `socket`.
    private func watch(_ socket: curl_socket_t, _ what: Int32) {
        // A closed socket left the epoll set with its close; its number may be a new socket's now.
        for closed in closedConnections.sockets {
            watched[closed] = nil
        }
        closedConnections.sockets.removeAll()
        if what == CURL_POLL_REMOVE {
            if watched.removeValue(forKey: socket) != nil {
                _ = CCurl_epoll_unwatch(epoll, socket)
            }
            return
        }
        let registered = watched.updateValue(what, forKey: socket)
        if registered == what { return }
        let reads: Int32 = what & CURL_POLL_IN != 0 ? 1 : 0
        let writes: Int32 = what & CURL_POLL_OUT != 0 ? 1 : 0
        let isNew = registered == nil
        if CCurl_epoll_watch(epoll, socket, reads, writes, isNew ? 1 : 0) != 0 && errno == ENOENT {
            // curl closed a socket without telling, and a new one got its number.
            _ = CCurl_epoll_watch(epoll, socket, reads, writes, 1)
        }
    }

    /// curl's timer callback: -1 removes the timer, 0 means at once.
    private func setTimer(_ timeoutMs: Int) {
        timerDeadline = timeoutMs < 0 ? nil : Self.now() + UInt64(timeoutMs) * 1_000_000
    }

    private static func now() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

/// Filled by libcurl's close-socket callback, on the driving thread; outlives the multi handle's cleanup.
private final class ClosedConnections {
    var keys: [String] = []
    /// Their sockets' numbers, until `watch` forgets what they were registered for.
    var sockets: [Int32] = []
}
