/// Where and how to connect to MariaDB. Timeouts are explicit so that a dead
/// server turns into an error within seconds instead of a hung request.
public struct ConnectionOptions: Sendable {
    /// The servers, tried in order (a Galera cluster's nodes; one for a single
    /// server); ignored when `socket` is set.
    public var addresses: [ServerAddress]
    /// Unix socket path; when set it is used instead of host and port.
    public var socket: String?
    public var user: String
    public var password: String
    public var database: String
    /// Seconds to wait for a connection. Default 2.
    public var connectTimeoutSeconds: UInt32 = 2
    /// Seconds to wait for one read or write on an open connection. Default 10.
    public var readWriteTimeoutSeconds: UInt32 = 10
    /// Allow several statements in one `executeScript` call (migrations only).
    public var allowsMultipleStatements = false
    /// Whether the session is encrypted. Default off.
    public var tls = TLS.off

    /// One server: a host name or IP address, and its TCP port.
    public struct ServerAddress: Sendable, Equatable {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }

    /// TLS to the server. There is no unverified mode: with TLS on, a server
    /// whose certificate does not check out is refused.
    public enum TLS: Sendable, Equatable {
        case off
        /// TLS required; the server's certificate must chain to the CAs of
        /// `caFile` (a PEM bundle; nil: OpenSSL's default CA paths) and name the host.
        case verify(caFile: String?)
    }

    /// What every session runs first. Sessions work in UTC (every DATETIME
    /// column of the schema is UTC), and strictly: a value that does not fit its
    /// column is an error, never cut short or replaced by a default (a
    /// transaction id cut to 64 characters could name another transaction),
    /// whatever the server's global `sql_mode` says.
    public static let sessionSetup =
        "SET time_zone = '+00:00', sql_mode = "
        + "'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'"

    public init(addresses: [ServerAddress], socket: String?, user: String, password: String, database: String) {
        precondition(!addresses.isEmpty || socket != nil, "a MariaDB connection needs an address or a socket")
        self.addresses = addresses
        self.socket = socket
        self.user = user
        self.password = password
        self.database = database
    }
}
