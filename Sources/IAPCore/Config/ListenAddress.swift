/// Where iap-fcgi accepts FastCGI connections (`IAP_LISTEN`).
public enum ListenAddress: Equatable, Sendable, CustomStringConvertible {
    /// The socket is already open as fd 0 (spawn-fcgi, systemd). `IAP_LISTEN` unset.
    case inheritedSocket
    /// A unix socket path: any value containing "/".
    case unix(path: String)
    /// A TCP address, from `host:port` (`[::1]:9000` for IPv6).
    case tcp(host: String, port: Int)

    /// The longest unix socket path the kernel takes (`sun_path` less its NUL).
    public static let maxUnixPathBytes = 107

    /// Reads an `IAP_LISTEN` value; nil when it is neither a path nor `host:port`.
    init?(_ text: String) {
        if text.contains("/") {
            guard text.utf8.count <= Self.maxUnixPathBytes else { return nil }
            self = .unix(path: text)
            return
        }
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = Substring(text[..<colon])
        let portText = text[text.index(after: colon)...]
        if host.hasPrefix("[") && host.hasSuffix("]") && host.count > 2 {
            host = host.dropFirst().dropLast()
        } else if host.contains(":") {
            return nil  // a bare IPv6 address is ambiguous; it needs brackets
        }
        guard !host.isEmpty, !portText.isEmpty,
            portText.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let port = Int(portText), (1...65535).contains(port)
        else { return nil }
        self = .tcp(host: String(host), port: port)
    }

    /// A TCP address only this host can connect to: `localhost`, 127.0.0.0/8 or
    /// `::1`. Any other host (`0.0.0.0`, a name) may take connections from elsewhere.
    public var isLoopback: Bool {
        guard case .tcp(let host, _) = self else { return false }
        return host == "localhost" || IPAddress(host)?.isLoopback == true
    }

    public var description: String {
        switch self {
        case .inheritedSocket: return "fd 0"
        case .unix(let path): return "unix:\(path)"
        case .tcp(let host, let port): return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }
}
