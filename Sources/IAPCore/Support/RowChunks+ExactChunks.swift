extension RowChunks {
    /// `values` cut at the sizes of `exact`, in order, each value once: the rows of each INSERT.
    public static func exactChunks<Value>(_ values: [Value]) -> [ArraySlice<Value>] {
        var start = values.startIndex
        return exact(values.count).map { size in
            defer { start += size }
            return values[start..<start + size]
        }
    }
}
