/// The fields of an `application/x-www-form-urlencoded` body (or a query
/// string): percent-decoded, `+` read as a space. A field that is not UTF-8 is
/// dropped; the first of repeated names wins.
public struct FormFields: Equatable, Sendable {
    public private(set) var values: [String: String] = [:]

    public init(_ encoded: String) {
        for pair in encoded.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = QueryString.percentDecoded(parts[0]), values[name] == nil,
                let value = parts.count > 1 ? QueryString.percentDecoded(parts[1]) : ""
            else { continue }
            values[name] = value
        }
    }

    public init(body: [UInt8]) {
        self.init(String(decoding: body, as: UTF8.self))
    }

    public subscript(name: String) -> String? { values[name] }

    /// `text` for a URL's query: everything but ASCII letters, digits and `-._~` percent-encoded.
    public static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(Character(Unicode.Scalar(byte)))
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%\(hex[Int(byte >> 4)])\(hex[Int(byte & 15)])"
            }
        }
        return out
    }

    /// The field trimmed of spaces, nil when absent or empty.
    public func text(_ name: String) -> String? {
        guard let value = values[name]?.trimmingSpaces, !value.isEmpty else { return nil }
        return String(value)
    }
}

/// The `Cookie` request header.
public enum CookieHeader {
    /// The value of cookie `name` in a `Cookie` header, nil when absent.
    public static func value(of name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, pair[0].trimmingSpaces == name else { continue }
            return String(pair[1].trimmingSpaces)
        }
        return nil
    }
}

/// Compares two secrets in time that does not depend on where they differ.
public enum ConstantTime {
    public static func equal(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8), right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
