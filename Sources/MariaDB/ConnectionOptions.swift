/// Where and how to connect to MariaDB. Timeouts are explicit so that a dead
/// server turns into an error within seconds instead of a hung request.
public struct ConnectionOptions: Sendable {
    /// TCP host; ignored when `socket` is set.
    public var host: String
    /// TCP port.
    public var port: Int
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

    public init(host: String, port: Int, socket: String?, user: String, password: String, database: String) {
        self.host = host
        self.port = port
        self.socket = socket
        self.user = user
        self.password = password
        self.database = database
    }
}
