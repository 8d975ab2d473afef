/// Placeholder lists for statements over several rows at once (`IN (...)`,
/// multi-row `VALUES`). Each count makes a statement text of its own, prepared
/// once per connection like any other.
public enum SQLPlaceholders {
    /// `?, ?, ?` for `count` values.
    public static func list(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    /// `(?, ?), (?, ?)` for `rows` rows of `columns` values.
    public static func rows(_ rows: Int, columns: Int) -> String {
        Array(repeating: "(\(list(columns)))", count: rows).joined(separator: ", ")
    }
}
