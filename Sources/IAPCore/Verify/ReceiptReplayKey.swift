import Crypto

/// The replay short-cut's key for a receipt: what its signature covers, so
/// that a copy re-encoded around the signature (a certificate added to,
/// dropped from or moved in the unsigned certificate set, lengths written in
/// more bytes) is the same receipt and is answered from the database, not sent
/// to Apple again.
///
/// For an app receipt (PKCS#7 SignedData in definite-length DER, read by
/// `SignedDataOutline` from tags and lengths only, in microseconds): SHA-256
/// of the signed payload's octets, each preceded by its length, and of every
/// signer's signature value. Anything else (a transaction receipt, a receipt
/// with indefinite lengths, a shape the outline declines) is keyed by the
/// SHA-256 of its bytes, as it always was.
///
/// Two receipts with the same key carry the same purchases under the same
/// signature: an answer Apple gave one of them holds for the other.
public enum ReceiptReplayKey {
    /// 64 lowercase hex digits.
    public static func hex(of bytes: [UInt8]) -> String {
        guard let outline = SignedDataOutline(bytes), let payload = payload(of: outline),
              let signatures = signatures(of: outline), !signatures.isEmpty
        else { return SHA256.hexDigest(bytes) }
        var hasher = SHA256()
        for part in [payload] + signatures {
            withUnsafeBytes(of: UInt64(part.count).bigEndian) { hasher.update(bufferPointer: $0) }
            part.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        }
        return lowercaseHex(hasher.finalize())
    }

    private static let octetString: UInt8 = 0x04

    /// The octets of `eContent` in `EncapsulatedContentInfo ::= SEQUENCE {
    /// eContentType OID, eContent [0] EXPLICIT OCTET STRING }`; nil when it is
    /// absent or not one primitive OCTET STRING.
    private static func payload(of outline: SignedDataOutline) -> ArraySlice<UInt8>? {
        guard let info = SignedDataOutline.content(of: outline.encapsulatedContent, tagged: SignedDataOutline.sequence),
              let fields = SignedDataOutline.elements(in: info), fields.count == 2,
              let explicit = SignedDataOutline.content(of: fields[1], tagged: SignedDataOutline.contextZero),
              let inner = SignedDataOutline.elements(in: explicit), inner.count == 1
        else { return nil }
        return SignedDataOutline.content(of: inner[0], tagged: octetString)
    }

    /// Each signer info's `signature`, the one OCTET STRING among its fields
    /// (`SignerInfo ::= SEQUENCE { version, sid, digestAlgorithm, [0]
    /// signedAttrs OPTIONAL, signatureAlgorithm, signature OCTET STRING, [1]
    /// unsignedAttrs OPTIONAL }`), in order.
    private static func signatures(of outline: SignedDataOutline) -> [ArraySlice<UInt8>]? {
        guard let set = SignedDataOutline.content(of: outline.signerInfos, tagged: SignedDataOutline.set),
              let signerInfos = SignedDataOutline.elements(in: set)
        else { return nil }
        var signatures: [ArraySlice<UInt8>] = []
        for signerInfo in signerInfos {
            guard let content = SignedDataOutline.content(of: signerInfo, tagged: SignedDataOutline.sequence),
                  let fields = SignedDataOutline.elements(in: content)
            else { return nil }
            let values = fields.filter { $0.first == octetString }
            guard values.count == 1, let value = SignedDataOutline.content(of: values[0], tagged: octetString)
            else { return nil }
            signatures.append(value)
        }
        return signatures
    }
}
