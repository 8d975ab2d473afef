/// A receipt as the client sent it, normalised and decoded. The service never
/// looks inside it: it hashes the bytes for the audit trail and forwards the
/// normalised base64 to Apple.
public struct ReceiptData: Equatable, Sendable {
    /// Standard base64 with line breaks and tabs removed and spaces read as `+`:
    /// what is stored and sent to Apple.
    public let base64: String
    /// The decoded receipt.
    public let bytes: [UInt8]
    /// SHA-256 of `bytes`, 64 lowercase hex digits (`receipts.sha256`), computed
    /// once: the replay check and the audit row both need it.
    public let sha256Hex: String

    init(base64: String, bytes: [UInt8]) {
        self.base64 = base64
        self.bytes = bytes
        self.sha256Hex = SHA256.hexDigest(bytes)
    }

    /// Cleans up what clients do to base64 on the way, then decodes it strictly.
    ///
    /// Removed: `\r`, `\n`, `\t` (line-wrapped encoders). Spaces become `+`
    /// (a form-encoded client's `+` arrives as a space). The rest must be standard
    /// base64: `A-Z a-z 0-9 + /`, with `=` padding to a multiple of 4. The unused
    /// low bits of the last character are not checked: the text is forwarded as
    /// is, and Apple is the judge of the receipt.
    ///
    /// - Throws: `APIError.invalidReceiptData` for anything else, or when
    ///   nothing is left.
    public static func normalise(_ raw: String) throws(APIError) -> ReceiptData {
        var text = raw
        let receipt: ReceiptData?
        if text.withUTF8(Base64.isClean) {
            // The usual case: decode in place and keep the caller's string.
            receipt = text.withUTF8(Base64.decode).map { ReceiptData(base64: text, bytes: $0) }
        } else {
            let cleaned = text.withUTF8(Base64.clean)
            receipt = cleaned.withUnsafeBufferPointer(Base64.decode).map {
                ReceiptData(base64: String(decoding: cleaned, as: UTF8.self), bytes: $0)
            }
        }
        guard let receipt, !receipt.bytes.isEmpty else { throw APIError.invalidReceiptData }
        return receipt
    }
}

/// The standard base64 alphabet (RFC 4648 section 4), decoding only.
private enum Base64 {
    static let space = UInt8(ascii: " ")
    static let plus = UInt8(ascii: "+")
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

    /// True when `clean` would change nothing.
    static func isClean(_ raw: UnsafeBufferPointer<UInt8>) -> Bool {
        !raw.contains { $0 == space || $0 == 0x0D || $0 == 0x0A || $0 == 0x09 }
    }

    /// Drops `\r \n \t` and turns spaces into `+`.
    static func clean(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var cleaned: [UInt8] = []
        cleaned.reserveCapacity(raw.count)
        for byte in raw {
            switch byte {
            case 0x0D, 0x0A, 0x09: continue
            case space: cleaned.append(plus)
            default: cleaned.append(byte)
            }
        }
        return cleaned
    }

    /// Strict decoding; nil for a wrong length, a byte outside the alphabet or
    /// padding anywhere but at the end.
    static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
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
}
