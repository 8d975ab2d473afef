import CMariaDB

/// An error from MariaDB Connector/C, carrying the server's or the client
/// library's error number and the C function that failed.
///
/// `description` is generic on purpose: it can reach a log line, and the server's
/// message may quote SQL or values. The detail is in `debugDescription`.
public struct MariaDBError: Error, CustomStringConvertible, CustomDebugStringConvertible, Sendable {
    /// The error number (`mysql_errno`, `mysql_stmt_errno`), e.g. 1062 for a duplicate key.
    public let code: UInt32
    public let sqlState: String
    public let function: String
    let message: String

    init(code: UInt32, sqlState: String, function: String, message: String) {
        self.code = code
        self.sqlState = sqlState
        self.function = function
        self.message = message
    }

    /// 1047 (ER_UNKNOWN_COM_ERROR): "WSREP has not yet prepared node for
    /// application use". A Galera node without quorum (isolated, or the
    /// cluster split) answers every statement so, on connections that stay open.
    public static let nodeNotReady: UInt32 = 1047

    /// True when the server this connection reached cannot serve it: the
    /// connection is lost, or it is a Galera node out of the cluster's primary
    /// component. The connection is closed and the next one goes to the next
    /// address of `IAP_DB_HOST`.
    public var isServerUnavailable: Bool { isConnectionLost || code == Self.nodeNotReady }

    /// True when the connection is unusable and must be opened again: the server
    /// is down, restarted, or the network dropped.
    public var isConnectionLost: Bool {
        switch code {
        case 2002, 2003, 2005, 2006, 2013, 2026, 2055, 1927, 1053, 4031: return true
        default: return false
        }
    }

    public var description: String {
        "MariaDB error \(code) (\(sqlState)) in \(function)"
    }

    public var debugDescription: String {
        "\(description): \(message)"
    }

    static func from(_ handle: UnsafeMutablePointer<MYSQL>, _ function: String) -> MariaDBError {
        MariaDBError(
            code: mysql_errno(handle),
            sqlState: String(cString: mysql_sqlstate(handle)),
            function: function,
            message: String(cString: mysql_error(handle)))
    }

    static func from(statement: UnsafeMutablePointer<MYSQL_STMT>, _ function: String) -> MariaDBError {
        MariaDBError(
            code: mysql_stmt_errno(statement),
            sqlState: String(cString: mysql_stmt_sqlstate(statement)),
            function: function,
            message: String(cString: mysql_stmt_error(statement)))
    }

    /// ER_MAX_PREPARED_STMT_COUNT_REACHED: the server holds `max_prepared_stmt_count` statements.
    static let tooManyPreparedStatements: UInt32 = 1461

    /// A write that did not touch the rows it must: the statement's transaction
    /// is rolled back. Client-side, so outside the server's and the library's numbers.
    public static func unexpectedRowCount(_ function: String, expected: Int, got: UInt64) -> MariaDBError {
        MariaDBError(
            code: 0, sqlState: "HY000", function: function, message: "expected \(expected) rows, got \(got)")
    }

    /// The connection was closed earlier (or never opened) and could not be opened.
    static let notConnected = MariaDBError(
        code: 2006, sqlState: "HY000", function: "connect", message: "not connected")
}
