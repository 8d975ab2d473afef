import CMariaDB
import Caches

/// The prepared statements of one connection, by SQL text, at most `capacity`
/// of them: the least recently used is closed (on the server too) to make room.
/// The server counts every session's statements against one
/// `max_prepared_stmt_count` (16,382 by default); past it every PREPARE fails,
/// for every client of the server. So a connection holds `capacity` at most,
/// and the texts over several rows exist for a few row counts only (`RowChunks`).
final class StatementCache {
    /// Statements one connection keeps. The busiest (a delivery thread's) uses
    /// about 70 texts (an INSERT of each row count up to 16 into three tables);
    /// 128 leaves room, and 20 connections hold 2,560 at most.
    static let capacity = 128

    private var statements = LRUCache<String, PreparedStatement>(capacity: StatementCache.capacity)

    /// The statement for `sql`, prepared on `connection` when it is not cached.
    /// When the server holds its maximum of statements, this connection's
    /// others are closed and the prepare is tried once more: the connection
    /// keeps working on statements it prepares as it goes.
    func statement(for sql: String, on connection: UnsafeMutablePointer<MYSQL>) throws(MariaDBError) -> PreparedStatement {
        if let statement = statements.value(for: sql) { return statement }
        let statement: PreparedStatement
        do {
            statement = try PreparedStatement(connection: connection, sql: sql)
        } catch where error.code == MariaDBError.tooManyPreparedStatements && statements.count > 0 {
            closeAll()
            statement = try PreparedStatement(connection: connection, sql: sql)
        }
        statements.insert(statement, for: sql)?.close()
        return statement
    }

    /// Closes every statement (the connection is closing, or making room).
    func closeAll() {
        for statement in statements.removeAll() {
            statement.close()
        }
    }
}
