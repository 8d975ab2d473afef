extension Duration {
    /// Whole milliseconds, for a log line or a C call that takes them.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
