import CMariaDB

/// What a session needs on a MariaDB Galera node, checked once per connection
/// (a single server without wsrep costs one query at connect).
///
/// - A node out of the cluster's primary component accepts connections but
///   answers every statement with 1047: such a node is refused at connect, so
///   that the connection goes to the next address instead.
/// - Galera replicates synchronously but applies asynchronously: a read on one
///   node can miss a commit just made through another. The service decides on
///   reads (the order before binding, the replay short-cut, the settings), so
///   its sessions wait for the node to have applied every commit the cluster
///   had when the read began (`wsrep_sync_wait = 1`: reads).
enum GaleraSession {
    static func prepare(_ connection: UnsafeMutablePointer<MYSQL>) throws(MariaDBError) {
        let wsrepOn: String?
        do {
            wsrepOn = try firstValue(connection, "SELECT @@global.wsrep_on", column: 0)
        } catch where error.code == unknownSystemVariable {
            return  // a server built without Galera
        }
        guard wsrepOn == "1" || wsrepOn == "ON" else { return }
        guard try firstValue(connection, "SHOW GLOBAL STATUS LIKE 'wsrep_ready'", column: 1) == "ON" else {
            throw MariaDBError(
                code: MariaDBError.nodeNotReady, sqlState: "08S01", function: "wsrep_ready",
                message: "the Galera node is not part of the primary component")
        }
        try firstValue(connection, "SET SESSION wsrep_sync_wait = 1", column: 0)
    }

    /// ER_UNKNOWN_SYSTEM_VARIABLE.
    private static let unknownSystemVariable: UInt32 = 1193

    /// Runs a constant statement (no parameters, nothing from a request) and
    /// gives the first row's `column`, if it returned one.
    @discardableResult
    private static func firstValue(
        _ connection: UnsafeMutablePointer<MYSQL>, _ sql: StaticString, column: Int
    ) throws(MariaDBError) -> String? {
        let length = UInt(sql.utf8CodeUnitCount)
        let failed = sql.withUTF8Buffer { text in
            text.withMemoryRebound(to: CChar.self) { mysql_real_query(connection, $0.baseAddress, length) != 0 }
        }
        if failed { throw MariaDBError.from(connection, "mysql_real_query") }
        guard let result = mysql_store_result(connection) else {
            if mysql_field_count(connection) != 0 { throw MariaDBError.from(connection, "mysql_store_result") }
            return nil
        }
        defer { mysql_free_result(result) }
        guard Int(mysql_num_fields(result)) > column, let row = mysql_fetch_row(result),
              let value = row[column]
        else { return nil }
        return String(cString: value)
    }
}
