/// A parameter of a prepared statement. Results come back as text (`String?`),
/// which is how the service uses them (DECIMAL and DATETIME included).
public enum SQLValue: Sendable, Equatable {
    case null
    case text(String)
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
    public var affectedRows: UInt64
    public var insertID: UInt64

    /// The first row, if any.
    public var first: [String?]? { rows.first }
}
