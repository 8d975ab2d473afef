/// Apple's dates, as milliseconds since 1970 UTC, written and read with plain
/// calendar arithmetic (proleptic Gregorian, UTC only): no Foundation formatter,
/// no locale, no time zone database.
public enum AppleDate {
    /// `2014-07-24T09:11:01Z`: the contract's dates, to the second.
    public static func iso8601(ms: Int64) -> String {
        CivilTime(ms: ms).text(separator: "T", milliseconds: false, suffix: "Z")
    }

    /// `2014-07-24 09:11:01.000`: a UTC value for a `DATETIME(3)` column.
    public static func sqlDateTime(ms: Int64) -> String {
        CivilTime(ms: ms).text(separator: " ", milliseconds: true, suffix: nil)
    }

    /// Reads Apple's `"2014-07-24 09:11:01 Etc/GMT"` (the zone may also be `GMT`,
    /// `UTC`, `Etc/UTC` or absent). Other zones, such as the `_pst` twins'
    /// `America/Los_Angeles`, are not read: nil.
    public static func milliseconds(fromAppleDate text: String) -> Int64? {
        let parts = text.utf8.split(separator: UInt8(ascii: " "))
        guard parts.count == 2 || parts.count == 3 else { return nil }
        if parts.count == 3, !utcZoneNames.contains(where: { $0.utf8.elementsEqual(parts[2]) }) { return nil }
        return milliseconds(date: parts[0], time: parts[1])
    }

    private static let utcZoneNames = ["Etc/GMT", "GMT", "UTC", "Etc/UTC"]

    /// `2014-07-24` and `09:11:01`, read as bytes: every verifyReceipt answer
    /// and every app receipt holds several dates, and reading them as
    /// `Character`s (grapheme breaking) was a twentieth of iap-fcgi's CPU in
    /// the bench's local receipt case (perf, 2026-11-28).
    static func milliseconds(date: Substring.UTF8View, time: Substring.UTF8View) -> Int64? {
        guard date.count == 10, byte(date, 4) == UInt8(ascii: "-"), byte(date, 7) == UInt8(ascii: "-"),
              time.count == 8, byte(time, 2) == UInt8(ascii: ":"), byte(time, 5) == UInt8(ascii: ":"),
              let year = number(date, 0..<4), let month = number(date, 5..<7), let day = number(date, 8..<10),
              let hour = number(time, 0..<2), let minute = number(time, 3..<5), let second = number(time, 6..<8),
              (1...12).contains(month), (1...daysInMonth(month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60
        else { return nil }
        let days = daysSinceEpoch(year: Int64(year), month: Int64(month), day: Int64(day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        return seconds * 1000
    }

    private static func byte(_ text: Substring.UTF8View, _ offset: Int) -> UInt8 {
        text[text.index(text.startIndex, offsetBy: offset)]
    }

    /// The ASCII digits at `offsets` of `text` as a number; nil when one is not a digit.
    private static func number(_ text: Substring.UTF8View, _ offsets: Range<Int>) -> Int? {
        var value = 0
        for offset in offsets {
            let digit = byte(text, offset)
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }

    private static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to a civil date (Howard Hinnant's `days_from_civil`).
    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    fileprivate static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}

/// A moment split into its UTC calendar fields.
private struct CivilTime {
    let year, month, day, hour, minute, second, millisecond: Int64

    init(ms: Int64) {
        let days = floorDivide(ms, 86_400_000)
        let msOfDay = ms - days * 86_400_000
        // Howard Hinnant's `civil_from_days`.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        hour = msOfDay / 3_600_000
        minute = msOfDay / 60_000 % 60
        second = msOfDay / 1000 % 60
        millisecond = msOfDay % 1000
    }

    /// `YYYY-MM-DD` `separator` `hh:mm:ss`, then `.mmm` and `suffix` if asked:
    /// written digit by digit into the string's own storage (formatting with
    /// interpolation and padded strings was 2% of iap-fcgi's CPU per
    /// verification: a dozen strings per date, several dates per row).
    /// Years outside 0...9999 are written as long as they are.
    func text(separator: Unicode.Scalar, milliseconds: Bool, suffix: Unicode.Scalar?) -> String {
        guard (0...9999).contains(year) else {
            return "\(AppleDate.pad(year, 4))-\(AppleDate.pad(month, 2))-\(AppleDate.pad(day, 2))\(separator)"
                + "\(AppleDate.pad(hour, 2)):\(AppleDate.pad(minute, 2)):\(AppleDate.pad(second, 2))"
                + (milliseconds ? ".\(AppleDate.pad(millisecond, 3))" : "") + (suffix.map { String($0) } ?? "")
        }
        return String(unsafeUninitializedCapacity: 24) { buffer in
            var count = 0
            func write(_ value: Int64, width: Int, then after: Unicode.Scalar?) {
                var rest = value
                for position in stride(from: count + width - 1, through: count, by: -1) {
                    buffer[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                count += width
                if let after {
                    buffer[count] = UInt8(after.value)
                    count += 1
                }
            }
            write(year, width: 4, then: "-")
            write(month, width: 2, then: "-")
            write(day, width: 2, then: separator)
            write(hour, width: 2, then: ":")
            write(minute, width: 2, then: ":")
            if milliseconds {
                write(second, width: 2, then: ".")
                write(millisecond, width: 3, then: suffix)
            } else {
                write(second, width: 2, then: suffix)
            }
            return count
        }
    }
}

private func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
    let quotient = value / divisor
    return value % divisor < 0 ? quotient - 1 : quotient
}
