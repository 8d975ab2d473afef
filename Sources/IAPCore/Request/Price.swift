/// An amount of money in hundredths (cents, fen), as the `DECIMAL(10,2)` price
/// columns hold it: non-negative, at most 8 digits before the point and 2 after.
/// Kept as an integer so that "6", "6.0" and "6.00" compare equal and nothing is
/// ever rounded.
public struct Price: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The amount in hundredths of the currency unit: 600 is 6.00.
    public let cents: Int64

    /// The largest amount `DECIMAL(10,2)` holds: 99999999.99.
    public static let maximumCents: Int64 = 99_999_999_99

    /// - Precondition: `0...maximumCents`.
    public init(cents: Int64) {
        precondition((0...Self.maximumCents).contains(cents), "price out of DECIMAL(10,2) range")
        self.cents = cents
    }

    /// Reads decimal text: `"6"`, `"6.5"`, `"6.00"` (MariaDB's `DECIMAL` text,
    /// or a client's string). No sign, no exponent, no spaces, no leading zero
    /// before other digits ("06"), 1 to 8 digits before the optional point and
    /// 1 or 2 after it. Nil for anything else.
    public init?(_ text: String) {
        guard let cents = Self.parseCents(text.utf8) else { return nil }
        self.cents = cents
    }

    /// Reads a client's `price`: a JSON string or a JSON number, by the rules of
    /// `init?(_:)` (so `6`, `6.5` and `6.00` pass; `6e0`, `-1` and `6.001` do not).
    public init?(json value: JSONValue) {
        switch value {
        case .string(let text), .number(let text): self.init(text)
        default: return nil
        }
    }

    /// Two fraction digits, as the database writes it: `"6.00"`.
    public var description: String {
        let fraction = cents % 100
        return "\(cents / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    private static func parseCents(_ text: String.UTF8View) -> Int64? {
        var whole: Int64 = 0
        var wholeDigits = 0
        var fraction: Int64 = 0
        var fractionDigits = 0
        var seenPoint = false
        var first: UInt8?
        for byte in text {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let digit = Int64(byte - UInt8(ascii: "0"))
                if seenPoint {
                    fractionDigits += 1
                    guard fractionDigits <= 2 else { return nil }
                    fraction = fraction * 10 + digit
                } else {
                    if wholeDigits == 1 && first == UInt8(ascii: "0") { return nil }
                    first = first ?? byte
                    wholeDigits += 1
                    guard wholeDigits <= 8 else { return nil }
                    whole = whole * 10 + digit
                }
            case UInt8(ascii: "."):
                guard !seenPoint, wholeDigits > 0 else { return nil }
                seenPoint = true
            default:
                return nil
            }
        }
        guard wholeDigits > 0, !seenPoint || fractionDigits > 0 else { return nil }
        return whole * 100 + (fractionDigits == 1 ? fraction * 10 : fraction)
    }
}
