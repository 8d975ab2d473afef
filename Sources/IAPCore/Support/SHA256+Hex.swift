import Crypto

extension SHA256 {
    /// The SHA-256 (swift-crypto, BoringSSL underneath) of `bytes` as 64
    /// lowercase hex digits: a receipt's and a JWS's fingerprint in the audit
    /// trail (`receipts.sha256`).
    public static func hexDigest(_ bytes: some Collection<UInt8>) -> String {
        var hasher = SHA256()
        let hashedInPlace: Void? = bytes.withContiguousStorageIfAvailable {
            hasher.update(bufferPointer: UnsafeRawBufferPointer($0))
        }
        if hashedInPlace == nil {
            hasher.update(data: Array(bytes))
        }
        return lowercaseHex(hasher.finalize())
    }
}

/// `bytes` as two lowercase hex digits each, with a dash before each byte
/// whose offset is in `dashesBefore` (a UUID's 4, 6, 8 and 10).
public func lowercaseHex(_ bytes: some Sequence<UInt8>, dashesBefore: [Int] = []) -> String {
    var text: [UInt8] = []
    // A digest does not tell its length (it is a Sequence): room for 32 bytes at least, so that one hashed
    // on every verification is written without the buffer growing.
    text.reserveCapacity(max(bytes.underestimatedCount, 32) * 2 + dashesBefore.count)
    for (offset, byte) in bytes.enumerated() {
        if dashesBefore.contains(offset) { text.append(UInt8(ascii: "-")) }
        text.append(hexDigits[Int(byte >> 4)])
        text.append(hexDigits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}

private let hexDigits = Array("0123456789abcdef".utf8)
