/// How to reach MariaDB (`IAP_DB_*`). Its descriptions and mirror never show
/// the password.
public struct DatabaseConfiguration: Equatable, Sendable {
    /// `IAP_DB_HOST`, default `127.0.0.1`: one host, or a comma-separated list
    /// of `host` or `host:port` tried in order (a Galera cluster's nodes).
    /// Ignored when `socket` is set.
    public var host: String
    /// `IAP_DB_PORT`, default `3306` (1...65535).
    public var port: Int
    /// `IAP_DB_SOCKET`: a unix socket path, used instead of host and port.
    /// Default nil (unset).
    public var socket: String?
    /// `IAP_DB_USER`, default `iap`.
    public var user: String
    /// `IAP_DB_PASSWORD`, default empty. Never logged.
    public var password: String
    /// `IAP_DB_NAME`, the database, default `iap`.
    public var name: String
    /// `IAP_DB_TLS`, default `off`.
    public var tls: DatabaseTLS
    /// `IAP_DB_CA_FILE`: a PEM bundle of the CAs trusted for MariaDB's
    /// certificate with `verify`; nil: the system's CAs.
    public var caFile: String?

    public init(
        host: String = "127.0.0.1", port: Int = 3306, socket: String? = nil,
        user: String = "iap", password: String = "", name: String = "iap", tls: DatabaseTLS = .off,
        caFile: String? = nil
    ) {
        self.host = host
        self.port = port
        self.socket = socket
        self.user = user
        self.password = password
        self.name = name
        self.tls = tls
        self.caFile = caFile
    }

    /// The servers `host` lists, in the order they are tried (the first entry
    /// as it is when the list does not parse: `fromEnvironment` refuses such a
    /// value, so only a hand-made configuration gets here).
    public var addresses: [DatabaseAddress] {
        DatabaseAddress.list(host, defaultPort: port) ?? [DatabaseAddress(host: host, port: port)]
    }
}

/// `IAP_DB_TLS`: whether the sessions to MariaDB are encrypted. There is no
/// mode that encrypts without checking the server: a session to a server it
/// cannot authenticate is refused, not opened.
public enum DatabaseTLS: String, CaseIterable, Equatable, Sendable {
    /// No TLS: a unix socket, or a network the operator trusts.
    case off
    /// TLS is required, the server's certificate must chain to `IAP_DB_CA_FILE`
    /// (or the system's CAs) and name `IAP_DB_HOST`.
    case verify
}

extension DatabaseConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        let place = socket.map { "socket: \($0)" } ?? "host: \(host), port: \(port)"
        let tlsDescription = tls == .off ? "off" : "verify with \(caFile ?? "<system CAs>")"
        return "DatabaseConfiguration(\(place), user: \(user), password: \(Redacted(password)), name: \(name), "
            + "tls: \(tlsDescription))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "host": host, "port": port, "socket": socket as Any, "user": user,
                "password": Redacted(password).description, "name": name, "tls": tls, "caFile": caFile as Any,
            ])
    }
}

/// How a secret shows in descriptions: whether it is set, never its value.
struct Redacted: CustomStringConvertible {
    let isSet: Bool

    init(_ secret: String?) {
        isSet = !(secret ?? "").isEmpty
    }

    var description: String { isSet ? "<redacted>" : "<unset>" }
}
