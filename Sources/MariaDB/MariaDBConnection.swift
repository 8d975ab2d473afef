import CMariaDB
import Glibc

/// Connector/C's global state must be set up once, before threads open connections.
private let libraryInitialised: Bool = mysql_server_init(0, nil, nil) == 0

/// One connection to MariaDB, used by one thread at a time.
///
/// Every statement goes through a prepared statement, prepared once and kept
/// while it is among the connection's most recently used (`StatementCache`).
/// Sessions are strict and in UTC (`ConnectionOptions.sessionSetup`). A lost
/// connection (server down, restarted, network drop), or a Galera node that
/// left the cluster's primary component, is closed and opened again on the next
/// call, to the next address of `IAP_DB_HOST` first, so the service recovers
/// by itself once a server is back.
///
/// Sendable only so that it can be handed to the thread that will own it: it is
/// never used by two threads at once.
public final class MariaDBConnection: @unchecked Sendable {
    private let options: ConnectionOptions
    private var handle: UnsafeMutablePointer<MYSQL>?
    private let statements = StatementCache()
    private var inTransaction = false
    /// Index in `options.addresses` of the server the next `open` tries first.
    private var firstAddress = 0

    public init(options: ConnectionOptions) {
        self.options = options
    }

    deinit {
        close()
    }

    /// Sets up Connector/C for the process. Call once from the main thread before
    /// starting threads that open connections.
    public static func initialiseLibrary() {
        precondition(libraryInitialised, "mysql_server_init failed")
    }

    /// Opens the connection if it is not open: to the first address of
    /// `IAP_DB_HOST` that takes it, starting with the one that served last
    /// (the next one after a server became unavailable).
    public func open() throws(MariaDBError) {
        if handle != nil { return }
        MariaDBConnection.initialiseLibrary()
        if options.socket != nil {
            handle = try connect(to: nil)
            return
        }
        var lastError = MariaDBError.notConnected
        for offset in 0..<options.addresses.count {
            let index = (firstAddress + offset) % options.addresses.count
            do {
                handle = try connect(to: options.addresses[index])
                firstAddress = index
                return
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// A new session to `address` (nil: the unix socket), set up and, on a
    /// Galera node, ready (`GaleraSession`).
    private func connect(to address: ConnectionOptions.ServerAddress?) throws(MariaDBError) -> UnsafeMutablePointer<MYSQL> {
        guard let connection = mysql_init(nil) else {
            throw MariaDBError(code: 2008, sqlState: "HY000", function: "mysql_init", message: "out of memory")
        }
        _ = CMariaDB_set_uint_option(connection, MYSQL_OPT_CONNECT_TIMEOUT, options.connectTimeoutSeconds)
        _ = CMariaDB_set_uint_option(connection, MYSQL_OPT_READ_TIMEOUT, options.readWriteTimeoutSeconds)
        _ = CMariaDB_set_uint_option(connection, MYSQL_OPT_WRITE_TIMEOUT, options.readWriteTimeoutSeconds)
        _ = CMariaDB_set_string_option(connection, MYSQL_SET_CHARSET_NAME, "utf8mb4")
        _ = CMariaDB_set_string_option(connection, MYSQL_INIT_COMMAND, ConnectionOptions.sessionSetup)
        if case .verify(let caFile) = options.tls {
            _ = CMariaDB_set_bool_option(connection, MYSQL_OPT_SSL_ENFORCE, 1)
            _ = CMariaDB_set_bool_option(connection, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, 1)
            if let caFile {
                _ = CMariaDB_set_string_option(connection, MYSQL_OPT_SSL_CA, caFile)
            }
        }
        let flags = options.allowsMultipleStatements ? UInt(CLIENT_MULTI_STATEMENTS) : 0
        let connected = options.socket.withOptionalCString { socketPath in
            mysql_real_connect(
                connection, address?.host, options.user, options.password, options.database,
                UInt32(address?.port ?? 0), socketPath, flags)
        }
        guard connected != nil else {
            let error = MariaDBError.from(connection, "mysql_real_connect")
            mysql_close(connection)
            throw error
        }
        do {
            try GaleraSession.prepare(connection)
        } catch {
            mysql_close(connection)
            throw error
        }
        return connection
    }

    /// Closes the connection and forgets its prepared statements.
    public func close() {
        statements.closeAll()
        if let handle {
            mysql_close(handle)
        }
        handle = nil
    }

    public var isOpen: Bool { handle != nil }

    /// Runs one statement with `?` placeholders bound to `parameters`.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [SQLValue] = []) throws(MariaDBError) -> SQLResult {
        if !inTransaction { closeIfServerHungUp() }
        try open()
        guard let handle else { throw MariaDBError.notConnected }
        do {
            return try statements.statement(for: sql, on: handle).execute(parameters)
        } catch {
            if error.isServerUnavailable { closeAndMoveOn() }
            throw error
        }
    }

    /// Runs `body` inside a database transaction: committed when it returns,
    /// rolled back when it throws (and the error rethrown).
    public func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try execute("START TRANSACTION")
        inTransaction = true
        defer { inTransaction = false }
        let result: Result
        do {
            result = try body()
        } catch {
            rollback()
            throw error
        }
        try commit()
        return result
    }

    /// An idle connection whose server went away (restart, idle timeout) has a
    /// socket that reads as closed. Finding that out costs no round trip, and
    /// lets the next statement go to a new connection instead of failing.
    private func closeIfServerHungUp() {
        guard let handle else { return }
        var descriptor = pollfd(fd: Int32(mysql_get_socket(handle)), events: Int16(POLLIN), revents: 0)
        if poll(&descriptor, 1, 0) > 0 {
            // Nothing is outstanding, so anything readable is the end of the connection.
            close()
        }
    }

    /// Runs a script of several statements (the migrations: trusted files, never
    /// request data). Needs `allowsMultipleStatements`.
    public func executeScript(_ sql: String) throws(MariaDBError) {
        try open()
        guard let handle else { throw MariaDBError.notConnected }
        let bytes = Array(sql.utf8)
        if mysql_real_query(handle, bytes, UInt(bytes.count)) != 0 {
            throw failure(handle, "mysql_real_query")
        }
        while true {
            if let result = mysql_store_result(handle) {
                mysql_free_result(result)
            } else if mysql_field_count(handle) != 0 {
                throw failure(handle, "mysql_store_result")
            }
            let next = mysql_next_result(handle)
            if next == -1 { return }
            if next > 0 { throw failure(handle, "mysql_next_result") }
        }
    }

    private func commit() throws(MariaDBError) {
        guard let handle else { throw MariaDBError.notConnected }
        if mysql_commit(handle) != 0 {
            throw failure(handle, "mysql_commit")
        }
    }

    private func rollback() {
        guard let handle else { return }
        if mysql_rollback(handle) != 0 {
            // A connection that cannot roll back is in an unknown state: drop it.
            close()
        }
    }

    private func failure(_ handle: UnsafeMutablePointer<MYSQL>, _ function: String) -> MariaDBError {
        let error = MariaDBError.from(handle, function)
        if error.isServerUnavailable { closeAndMoveOn() }
        return error
    }

    /// The server cannot serve this connection (it went away, or it is a Galera
    /// node without quorum): the next connection tries the next address first.
    private func closeAndMoveOn() {
        close()
        if !options.addresses.isEmpty {
            firstAddress = (firstAddress + 1) % options.addresses.count
        }
    }
}

extension Optional where Wrapped == String {
    fileprivate func withOptionalCString<Result>(_ body: (UnsafePointer<CChar>?) -> Result) -> Result {
        switch self {
        case .some(let string): return string.withCString { body($0) }
        case .none: return body(nil)
        }
    }
}
