extension AppleDate {
    /// RFC 3339 in UTC, `2014-07-24T09:11:01Z` (or `+00:00`; fractions of a
    /// second dropped), in ms since 1970: an app receipt's dates, and `iapctl
    /// notifications sync --since`. Other offsets are not read: nil.
    public static func milliseconds(fromRFC3339 text: String) -> Int64? {
        var time = Substring(text)
        if time.hasSuffix("Z") {
            time = time.dropLast()
        } else if time.hasSuffix("+00:00") {
            time = time.dropLast(6)
        } else {
            return nil
        }
        if let dot = time.firstIndex(of: ".") {
            guard time[time.index(after: dot)...].allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            time = time[..<dot]
        }
        let parts = time.split(separator: "T", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        return milliseconds(fromAppleDate: "\(parts[0]) \(parts[1])")
    }
}
