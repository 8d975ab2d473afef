/// What the metrics listener answers to a request head: it serves
/// `GET /metrics` (a query string is ignored; HEAD as GET) and nothing else.
public enum MetricsRequest: Equatable, Sendable {
    /// The exposition, 200.
    case metrics
    /// `/metrics` with another method: 405.
    case methodNotAllowed
    /// Any other path: 404.
    case notFound
    /// Not an HTTP/1.x request line: 400.
    case malformed

    /// The longest request head read; a longer one is `malformed`.
    public static let headLimit = 8192

    /// Reads the request line of `head` (the bytes up to the blank line, or what arrived of them).
    public init(head: some Collection<UInt8>) {
        let line = head.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].starts(with: "HTTP/1.".utf8), parts[1].first == UInt8(ascii: "/") else {
            self = .malformed
            return
        }
        let path = parts[1].prefix { $0 != UInt8(ascii: "?") }
        guard path.elementsEqual("/metrics".utf8) else {
            self = .notFound
            return
        }
        let method = parts[0]
        self = method.elementsEqual("GET".utf8) || method.elementsEqual("HEAD".utf8) ? .metrics : .methodNotAllowed
    }

    /// Whether `bytes` hold a whole request head (through its blank line).
    public static func isComplete(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        for end in 3..<bytes.count where bytes[end] == UInt8(ascii: "\n") {
            if bytes[end - 1] == UInt8(ascii: "\n") { return true }
            if bytes[end - 1] == UInt8(ascii: "\r") && bytes[end - 2] == UInt8(ascii: "\n") { return true }
        }
        return false
    }

    /// The status line's code and reason.
    public var status: (code: Int, reason: String) {
        switch self {
        case .metrics: return (200, "OK")
        case .methodNotAllowed: return (405, "Method Not Allowed")
        case .notFound: return (404, "Not Found")
        case .malformed: return (400, "Bad Request")
        }
    }
}

