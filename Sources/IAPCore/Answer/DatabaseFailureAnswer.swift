/// How a route answers a database failure: the database is down or busy (503
/// `database_unavailable`, and the client retries), or our statement is wrong
/// (500 `internal_error`, which a retry would not cure). Decided from the
/// server's or the client library's error number, so that the domain's answer
/// stays out of the database wrapper.
public enum DatabaseFailureAnswer {
    /// Server errors that mean busy or not ready, not wrong: too many
    /// connections (1040), a lock wait timeout (1205), a deadlock (1213),
    /// access denied (1045) or an unknown database (1049) while the server is
    /// being set up, and a server holding its `max_prepared_stmt_count`
    /// statements (1461: they are freed as sessions close theirs).
    public static let busyServerErrors: Set<UInt32> = [1040, 1205, 1213, 1045, 1049, 1461]

    /// The client library's own errors (2000 to 2999): the connection, not the statement, failed.
    public static let clientErrors: Range<UInt32> = 2000..<3000

    /// - Parameters:
    ///   - errorNumber: `mysql_errno`, or `mysql_stmt_errno`.
    ///   - serverUnavailable: the connection was lost, or reached a Galera node
    ///     outside the cluster's primary component.
    public static func apiError(errorNumber: UInt32, serverUnavailable: Bool) -> APIError {
        serverUnavailable || busyServerErrors.contains(errorNumber) || clientErrors.contains(errorNumber)
            ? .databaseUnavailable : .internalError
    }
}
