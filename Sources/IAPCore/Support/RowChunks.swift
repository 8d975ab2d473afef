/// The row counts that statements over several rows are written for. An
/// INSERT takes its rows in one statement up to `largest` (any count, so that
/// a batch is one round trip and, alone, needs no transaction around it); an
/// `IN (...)` list or a `CASE` update, which can repeat a value, is padded to
/// 1, 2, 4, 8 or 16. A connection prepares at most `largest` texts of an
/// INSERT and five of a padded statement.
public enum RowChunks {
    /// The largest count one statement takes.
    public static let largest = 16

    /// `count` as statement sizes, with nothing left over (for INSERTs, where
    /// each row is written once): 13 → [13]; 40 → [16, 16, 8].
    public static func exact(_ count: Int) -> [Int] {
        precondition(count >= 0, "a negative row count")
        let rest = count % largest
        return Array(repeating: largest, count: count / largest) + (rest > 0 ? [rest] : [])
    }

    /// Whether `count` rows go in one INSERT (`exact`), which is atomic by
    /// itself: more need a transaction around their statements.
    public static func fitInOneStatement(_ count: Int) -> Bool {
        count <= largest
    }

    /// `values` cut into chunks of `largest`, the last one filled up to the next
    /// written size by repeating its last value (for `IN (...)` lists and
    /// `CASE` updates, where a value named twice counts once): 13 values → one
    /// chunk of 16. Empty for no values.
    public static func padded<Value>(_ values: [Value]) -> [[Value]] {
        stride(from: 0, to: values.count, by: largest).map { start in
            var chunk = Array(values[start..<min(start + largest, values.count)])
            let size = smallestSize(atLeast: chunk.count)
            chunk += Array(repeating: chunk[chunk.count - 1], count: size - chunk.count)
            return chunk
        }
    }

    /// The smallest written size that holds `count` (at most `largest`) values.
    private static func smallestSize(atLeast count: Int) -> Int {
        var size = 1
        while size < count { size *= 2 }
        return size
    }
}
