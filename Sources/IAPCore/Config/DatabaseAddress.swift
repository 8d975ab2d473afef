/// One MariaDB server of `IAP_DB_HOST`: a comma-separated list of `host` or
/// `host:port` (`[::1]:3307` for IPv6), tried in order. A Galera cluster lists
/// its nodes; a single server is a list of one.
public struct DatabaseAddress: Equatable, Sendable, CustomStringConvertible {
    public let host: String
    public let port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// The addresses of an `IAP_DB_HOST` value; an entry without a port takes
    /// `defaultPort` (`IAP_DB_PORT`). nil when an entry is empty or malformed.
    public static func list(_ text: String, defaultPort: Int) -> [DatabaseAddress]? {
        var addresses: [DatabaseAddress] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = entry.trimmingSpaces
            guard let address = DatabaseAddress(trimmed, defaultPort: defaultPort) else { return nil }
            addresses.append(address)
        }
        return addresses.isEmpty ? nil : addresses
    }

    private init?(_ text: Substring, defaultPort: Int) {
        guard !text.isEmpty, !text.contains(where: { $0 == " " || $0 == "/" }) else { return nil }
        if text.hasPrefix("[") {
            // [v6] or [v6]:port
            guard let close = text.firstIndex(of: "]"), text.index(after: text.startIndex) < close else { return nil }
            let host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if rest.isEmpty {
                self.init(host: String(host), port: defaultPort)
                return
            }
            guard rest.hasPrefix(":"), let port = Self.port(rest.dropFirst()) else { return nil }
            self.init(host: String(host), port: port)
            return
        }
        let colons = text.filter { $0 == ":" }.count
        if colons == 0 {
            self.init(host: String(text), port: defaultPort)
        } else if colons == 1, let colon = text.firstIndex(of: ":"), colon > text.startIndex,
                  let port = Self.port(text[text.index(after: colon)...]) {
            self.init(host: String(text[..<colon]), port: port)
        } else {
            return nil  // a bare IPv6 address with a port is ambiguous; it needs brackets
        }
    }

    private static func port(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              text.count <= 5, let port = Int(text), (1...65535).contains(port)
        else { return nil }
        return port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
