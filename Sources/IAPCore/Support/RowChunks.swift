/// The row counts that statements over several rows are written for: 1, 2, 4,
/// 8 and 16. Every other count is made of these, so that each such statement
/// has five texts at most, and a connection prepares five statements for it,
/// not one per batch size it ever saw.
public enum RowChunks {
    /// The largest count one statement takes.
    public static let largest = 16

    /// `count` as statement sizes, largest first, with nothing left over (for
    /// INSERTs, where each row is written once): 13 → [8, 4, 1]; 40 → [16, 16, 8].
    public static func exact(_ count: Int) -> [Int] {
        precondition(count >= 0, "a negative row count")
        var sizes = Array(repeating: largest, count: count / largest)
        var rest = count % largest
        var size = largest
        while rest > 0 {
            size /= 2
            if rest >= size {
                sizes.append(size)
                rest -= size
            }
        }
        return sizes
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
