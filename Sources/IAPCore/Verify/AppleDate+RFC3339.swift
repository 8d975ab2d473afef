extension AppleDate {
    /// RFC 3339 in UTC, `2014-07-24T09:11:01Z` (or `+00:00`; fractions of a
    /// second dropped), in ms since 1970: an app receipt's dates, and `iapctl
    /// notifications sync --since`. Other offsets are not read: nil.
    public static func milliseconds(fromRFC3339 text: String) -> Int64? {
        var time = text.utf8[...]
        if time.last == UInt8(ascii: "Z") {
            time = time.dropLast()
        } else if time.reversed().starts(with: "00:00+".utf8) {
            time = time.dropLast(6)
        } else {
            return nil
        }
        if let dot = time.firstIndex(of: UInt8(ascii: ".")) {
            guard time[time.index(after: dot)...].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else { return nil }
            time = time[..<dot]
        }
        let parts = time.split(separator: UInt8(ascii: "T"), omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        return milliseconds(date: parts[0], time: parts[1])
    }
}
