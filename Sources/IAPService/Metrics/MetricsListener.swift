import Glibc
import IAPCore

/// The socket of `IAP_METRICS_LISTEN`: plain HTTP/1.1, one connection at a
/// time, `Connection: close`. Prometheus scrapes every 15 to 60 s; a client that
/// sends nothing or reads nothing is dropped after `ioTimeoutSeconds`.
struct MetricsListener: Sendable {
    let descriptor: Int32
    static let ioTimeoutSeconds = 2

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
        let descriptor = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
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
        return MetricsListener(descriptor: descriptor)
    }

    /// Waits at most `timeoutMs` for a connection; true when one is ready to accept.
    func waitForConnection(timeoutMs: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, timeoutMs) > 0 && entry.revents & Int16(POLLIN) != 0
    }

    /// Accepts one connection, reads its request head and answers it with
    /// `exposition()` for `GET /metrics`, an empty error otherwise.
    func serveOne(exposition: () -> [UInt8]) {
        let connection = accept(descriptor, nil, nil)
        guard connection >= 0 else { return }
        defer { close(connection) }
        var timeout = timeval(tv_sec: Self.ioTimeoutSeconds, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let head = readHead(connection) else { return }
        let request = MetricsRequest(head: head)
        let body = request == .metrics ? exposition() : []
        let isHead = head.starts(with: "HEAD ".utf8)
        var response = Array(
            ("HTTP/1.1 \(request.status.code) \(request.status.reason)\r\n"
                + "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n").utf8)
        if !isHead { response.append(contentsOf: body) }
        writeAll(connection, response)
    }

    /// The bytes through the blank line ending the head; nil when the peer
    /// closed, timed out or sent more than `MetricsRequest.headLimit` without one.
    private func readHead(_ connection: Int32) -> [UInt8]? {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        while !MetricsRequest.isComplete(head) {
            guard head.count < MetricsRequest.headLimit else { return nil }
            let count = buffer.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            head.append(contentsOf: buffer[0..<count])
        }
        return head
    }

    private func writeAll(_ connection: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return }
            offset += count
        }
    }
}
