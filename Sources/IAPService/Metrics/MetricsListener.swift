import Glibc
import IAPCore

/// The socket of `IAP_METRICS_LISTEN`: plain HTTP/1.1, `Connection: close`.
/// Prometheus scrapes every 15 to 60 s.
///
/// Connections are served together, by one `poll` over the socket and every
/// connection open, and never wait on each other: a client that sends
/// nothing, sends slowly or reads nothing only holds its own connection, which
/// is closed `ioTimeoutSeconds` after it was accepted whatever it did. (Served
/// one at a time, with a deadline per read, one silent client stopped
/// `/metrics` for everyone, and the backlog probes of the same thread, for as
/// long as it kept sending a byte now and then.)
struct MetricsListener: Sendable {
    let descriptor: Int32
    /// A pipe whose read end `serve` polls with the socket: `wakeUp` ends its wait.
    private let wakePipe: (read: Int32, write: Int32)
    static let ioTimeoutSeconds = 2
    /// Connections open at once, at most; more wait in the listen backlog
    /// until one is answered or times out.
    static let connectionLimit = 32

    /// A connection being served: its request head as it arrives, then its answer as it leaves.
    struct Connection {
        let descriptor: Int32
        /// Past it (monotonic), the connection is closed unanswered.
        let deadlineNs: UInt64
        var head: [UInt8] = []
        /// The answer once the head is complete, and how much of it was sent.
        var answer: [UInt8]?
        var sent = 0
    }

    /// Binds and listens on `host:port`.
    /// - Throws: `ConfigurationError` naming `IAP_METRICS_LISTEN` when the address cannot be used.
    static func open(host: String, port: Int) throws(ConfigurationError) -> MetricsListener {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let info = found else {
            throw ConfigurationError(variable: "IAP_METRICS_LISTEN", problem: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(info) }
        let descriptor = socket(
            info.pointee.ai_family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var yes: Int32 = 1
        guard descriptor >= 0,
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size)) == 0,
            bind(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0,
            listen(descriptor, 16) == 0
        else {
            let reason = String(cString: strerror(errno))
            if descriptor >= 0 { close(descriptor) }
            throw ConfigurationError(variable: "IAP_METRICS_LISTEN", problem: "cannot listen on \(host):\(port): \(reason)")
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw ConfigurationError(variable: "IAP_METRICS_LISTEN", problem: "cannot make a wake-up pipe: \(reason)")
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        return MetricsListener(descriptor: descriptor, wakePipe: (ends[0], ends[1]))
    }

    /// Ends the current or next wait of `serve` (the service stops).
    func wakeUp() {
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
    }

    /// Closes the connections still open, the socket and the pipe.
    func closeAll(_ connections: [Connection]) {
        for connection in connections {
            close(connection.descriptor)
        }
        close(descriptor)
        close(wakePipe.read)
        close(wakePipe.write)
    }

    /// Waits at most `timeoutMs` (less when a connection's deadline comes
    /// first) for the socket and `connections`, then does what they are ready
    /// for: accepts new ones, reads request heads, sends answers, closes those
    /// answered or past their deadline. `exposition()` makes the body of `GET
    /// /metrics`; other requests get an empty error.
    func serve(_ connections: inout [Connection], waitingAtMostMs timeoutMs: Int32, exposition: () -> [UInt8]) {
        let now = SystemClock.monotonicNanoseconds()
        let nearestDeadlineMs = connections.map { ($0.deadlineNs - min($0.deadlineNs, now)) / 1_000_000 + 1 }.min()
        let waitMs = min(Int64(timeoutMs), nearestDeadlineMs.map { Int64($0) } ?? Int64(timeoutMs))
        let listening = connections.count < Self.connectionLimit ? descriptor : -1  // poll skips -1
        var entries = [
            pollfd(fd: listening, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0),
        ]
        entries += connections.map {
            pollfd(fd: $0.descriptor, events: Int16($0.answer == nil ? POLLIN : POLLOUT), revents: 0)
        }
        guard poll(&entries, nfds_t(entries.count), Int32(waitMs)) >= 0 else { return }
        if entries[1].revents != 0 {
            var drain = [UInt8](repeating: 0, count: 64)
            while read(wakePipe.read, &drain, drain.count) > 0 {}
        }
        var open: [Connection] = []
        for (index, var connection) in connections.enumerated() {
            let ready = entries[index + 2].revents != 0
            let inTime = SystemClock.monotonicNanoseconds() < connection.deadlineNs
            if inTime && (!ready || advance(&connection, exposition: exposition)) {
                open.append(connection)
            } else {
                close(connection.descriptor)
            }
        }
        if entries[0].revents & Int16(POLLIN) != 0, let accepted = accept() {
            open.append(accepted)
        }
        connections = open
    }

    private func accept() -> Connection? {
        let connection = Glibc.accept(descriptor, nil, nil)
        guard connection >= 0 else { return nil }
        _ = fcntl(connection, F_SETFL, O_NONBLOCK)
        _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
        return Connection(
            descriptor: connection,
            deadlineNs: SystemClock.monotonicNanoseconds() + UInt64(Self.ioTimeoutSeconds) * 1_000_000_000)
    }

    /// Reads or sends what the connection is ready for; false once it is done
    /// with (answered, closed by the peer, failed, or its head too long).
    private func advance(_ connection: inout Connection, exposition: () -> [UInt8]) -> Bool {
        guard let answer = connection.answer else {
            guard readHead(&connection) else { return false }
            if MetricsRequest.isComplete(connection.head) {
                connection.answer = Self.answer(to: connection.head, exposition: exposition)
            }
            return true
        }
        let count = answer[connection.sent...].withUnsafeBytes {
            send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
        }
        guard count > 0 || (count < 0 && errno == EAGAIN) else { return false }
        connection.sent += max(count, 0)
        return connection.sent < answer.count
    }

    /// Appends what arrived to the head; false when the peer closed or failed,
    /// or sent more than `MetricsRequest.headLimit` without ending it.
    private func readHead(_ connection: inout Connection) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 2048)
        let count = buffer.withUnsafeMutableBytes { read(connection.descriptor, $0.baseAddress, $0.count) }
        if count < 0 && errno == EAGAIN { return true }
        guard count > 0 else { return false }
        connection.head.append(contentsOf: buffer[0..<count])
        return MetricsRequest.isComplete(connection.head) || connection.head.count < MetricsRequest.headLimit
    }

    private static func answer(to head: [UInt8], exposition: () -> [UInt8]) -> [UInt8] {
        let request = MetricsRequest(head: head)
        let body = request == .metrics ? exposition() : []
        var response = Array(
            ("HTTP/1.1 \(request.status.code) \(request.status.reason)\r\n"
                + "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n").utf8)
        if !head.starts(with: "HEAD ".utf8) { response.append(contentsOf: body) }
        return response
    }
}
