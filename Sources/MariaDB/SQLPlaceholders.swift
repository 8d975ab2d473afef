/// Placeholder lists for statements over several rows at once (`IN (...)`,
/// multi-row `VALUES`). Each count makes a statement text of its own, prepared
/// on each connection that runs it: callers keep to the counts of
/// `RowChunks` (at most 16), so that the texts stay few.
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
