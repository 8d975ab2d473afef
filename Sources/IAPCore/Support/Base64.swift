/// Base64 decoding (RFC 4648): the standard alphabet (section 4), strictly,
/// and base64url (section 5) as JWS writes it, without padding.
public enum Base64 {
    static let padding = UInt8(ascii: "=")

    /// The 6-bit value of each byte; 0xFF for bytes outside the alphabet, so
    /// that OR-ing values and testing `< 64` checks several at once.
    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = UInt8(value)
        }
        return table
    }()


    /// Strict decoding; nil for a wrong length, a byte outside the alphabet or
    /// padding anywhere but at the end.
    public static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        // One or two trailing `=`; any other `=` is outside the alphabet below.
        var paddingCount = 0
        if text.count >= 4 && text[text.count - 1] == padding {
            paddingCount = text[text.count - 2] == padding ? 2 : 1
        }
        let significant = text.count - paddingCount
        var valid = true
        let output = values.withUnsafeBufferPointer { values in
            [UInt8](unsafeUninitializedCapacity: significant / 4 * 3 + 2) { output, written in
                var index = 0
                var end = 0
                while index + 4 <= significant {
                    let a = values[Int(text[index])]
                    let b = values[Int(text[index + 1])]
                    let c = values[Int(text[index + 2])]
                    let d = values[Int(text[index + 3])]
                    guard a | b | c | d < 64 else {
                        valid = false
                        break
                    }
                    output[end] = a << 2 | b >> 4
                    output[end + 1] = b << 4 | c >> 2
                    output[end + 2] = c << 6 | d
                    index += 4
                    end += 3
                }
                if valid && significant - index >= 2 {  // 2 or 3 characters before the padding
                    let a = values[Int(text[index])]
                    let b = values[Int(text[index + 1])]
                    let c = significant - index == 3 ? values[Int(text[index + 2])] : 0
                    valid = a | b | c < 64
                    output[end] = a << 2 | b >> 4
                    end += 1
                    if significant - index == 3 {
                        output[end] = b << 4 | c >> 2
                        end += 1
                    }
                }
                written = valid ? end : 0
            }
        }
        return valid ? output : nil
    }

    /// `decode` of a string's UTF-8.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8(decode)
    }

    /// Base64url without padding, as JWS (RFC 7515) writes each part: `-` and
    /// `_` where standard base64 has `+` and `/`, and no `=`. Nil for anything
    /// else, including a length that no byte string encodes to.
    public static func decodeURL(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        let paddedCount = (text.count + 3) / 4 * 4
        var standard = [UInt8](repeating: padding, count: paddedCount)
        for index in 0..<text.count {
            switch text[index] {
            case UInt8(ascii: "-"): standard[index] = UInt8(ascii: "+")
            case UInt8(ascii: "_"): standard[index] = UInt8(ascii: "/")
            case UInt8(ascii: "+"), UInt8(ascii: "/"), padding: return nil
            case let byte: standard[index] = byte
            }
        }
        return standard.withUnsafeBufferPointer(decode)
    }

    /// `decodeURL` of part of an array.
    public static func decodeURL(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        text.withUnsafeBufferPointer(decodeURL)
    }
}
