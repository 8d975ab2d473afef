/// Finds where a run of "plain" bytes ends: printable ASCII other than `"` and
/// `\` (0x20-0x7F less those two), the bytes a JSON string holds as they are.
///
/// The parser and the writer step over such runs eight bytes at a time. Most of
/// what they read and write is long plain runs (a receipt's 2-6 KB of base64 in
/// every verify request and every call to Apple), and a byte-by-byte loop over
/// them was 1-2% of iap-fcgi's CPU per verification (`perf`, bench case e1).
enum PlainASCIIRun {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The index of the first byte at or after `start` that is not plain
    /// (`bytes.count` when there is none).
    static func end(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= bytes.count {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                if hasSpecialByte(word) { break }
                index += 8
            }
        }
        while index < bytes.count && isPlain(bytes[index]) {
            index += 1
        }
        return index
    }

    static func isPlain(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x80 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    /// True when some byte of `word` may not be plain. Exact when it says
    /// false; the caller then checks byte by byte.
    private static func hasSpecialByte(_ word: UInt64) -> Bool {
        let nonASCII = word & highBits
        let control = (word &- ones &* 0x20) & ~word & highBits
        let quote = hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
        let backslash = hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
        return (nonASCII | control | quote | backslash) != 0
    }

    /// The classic test: non-zero when some byte of `word` is zero.
    private static func hasZeroByte(_ word: UInt64) -> UInt64 {
        (word &- ones) & ~word & highBits
    }
}
