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

/// `bytes` as two lowercase hex digits each.
public func lowercaseHex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.underestimatedCount * 2)
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}
