/// A parameter of a prepared statement. Results come back as text (`String?`),
/// which is how the service uses them (DECIMAL and DATETIME included).
public enum SQLValue: Sendable, Equatable {
    case null
    case text(String)
    /// Text the server takes as binary: it stores the bytes as they are,
    /// without converting them to the column's character set. Only for values
    /// already known to be ASCII (base64, a JWS) going to `ascii` columns:
    /// sent as `.text`, a 6 KB receipt was converted character by character
    /// from the connection's utf8mb4, 5% of MariaDB's CPU per verification
    /// (perf, 2026-11-24).
    case asciiBytes(String)
    case integer(Int64)
}

extension SQLValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(nilLiteral: ()) { self = .null }

    /// `.null` for nil, else the text.
    public static func optional(_ value: String?) -> SQLValue {
        value.map(SQLValue.text) ?? .null
    }
}

/// What a statement returned: its rows as text, and for writes the number of
/// rows changed and the AUTO_INCREMENT value it made.
public struct SQLResult: Sendable {
    public var rows: [[String?]]
    /// Rows inserted, deleted or changed. An UPDATE that sets a row to the values
    /// it has does not count it (the connection does not ask for CLIENT_FOUND_ROWS,
    /// which would also count a duplicate left alone by ON DUPLICATE KEY UPDATE as
    /// inserted, and the transaction inserts rely on telling the two apart).
    public var affectedRows: UInt64
    /// For an UPDATE, the rows its WHERE matched, changed or not (the server's
    /// "Rows matched" info); nil for other statements.
    public var matchedRows: UInt64?
    public var insertID: UInt64

    /// The first row, if any.
    public var first: [String?]? { rows.first }

    /// Throws unless the write touched exactly `count` rows: those an UPDATE
    /// matched, those an INSERT or DELETE wrote. `what` names the write in the error.
    public func requireRows(_ count: Int, _ what: String) throws(MariaDBError) {
        let touched = matchedRows ?? affectedRows
        guard touched == UInt64(count) else {
            throw MariaDBError.unexpectedRowCount(what, expected: count, got: touched)
        }
    }

    /// "Rows matched: 3  Changed: 0  Warnings: 0" (`mysql_info` after an UPDATE) → 3.
    static func matchedRows(inInfo info: String) -> UInt64? {
        let prefix = "Rows matched: "
        guard info.hasPrefix(prefix) else { return nil }
        return UInt64(String(info.dropFirst(prefix.count).prefix { $0.isNumber }))
    }
}
