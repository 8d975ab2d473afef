import Crypto

/// A receipt as the client sent it, normalised and decoded. It is hashed for
/// the audit trail and the replay short-cut, and the normalised base64 is what
/// goes to Apple.
public struct ReceiptData: Equatable, Sendable {
    /// Standard base64 with line breaks and tabs removed and spaces read as `+`:
    /// what is stored and sent to Apple.
    public let base64: String
    /// SHA-256 of the decoded receipt, 64 lowercase hex digits
    /// (`receipts.sha256`), computed once: the replay check and the audit row
    /// both need it. The decoded bytes themselves are not kept: nothing else
    /// reads them, and a verification waiting on Apple held them for nothing
    /// (5.5 MiB at 2,000 calls in flight, heaptrack).
    public let sha256Hex: String
    /// The replay short-cut's key (`receipts.signed_key`): what the receipt's
    /// signature covers, or its `sha256Hex` when it is not an app receipt in
    /// DER (`ReceiptReplayKey`). Computed here, where the decoded bytes are.
    public let replayKeyHex: String

    init(base64: String, bytes: [UInt8]) {
        self.base64 = base64
        self.sha256Hex = SHA256.hexDigest(bytes)
        self.replayKeyHex = ReceiptReplayKey.hex(of: bytes)
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
        if text.withUTF8(Base64.isClean) {
            // The usual case: decode in place and keep the caller's string.
            guard let bytes = text.withUTF8(Base64.decode), !bytes.isEmpty else { throw APIError.invalidReceiptData }
            return ReceiptData(base64: text, bytes: bytes)
        }
        let cleaned = text.withUTF8(Base64.clean)
        guard let bytes = cleaned.withUnsafeBufferPointer(Base64.decode), !bytes.isEmpty else {
            throw APIError.invalidReceiptData
        }
        return ReceiptData(base64: String(decoding: cleaned, as: UTF8.self), bytes: bytes)
    }
}

/// What clients do to base64 on the way, undone before decoding.
private extension Base64 {
    static let space = UInt8(ascii: " ")
    static let plus = UInt8(ascii: "+")

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
}
