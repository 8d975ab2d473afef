/// The top of a PKCS#7 SignedData in definite-length DER, found by reading tags
/// and lengths only: where its encapsulated content, certificates and signer
/// infos lie, each as the bytes of its element. The certificates are most of
/// an App Store receipt, and once their chain is cached (`AppReceiptVerifier`)
/// they are needed only as bytes; parsing them into ASN.1 nodes with the rest
/// was a tenth of iap-fcgi's CPU in the bench's local receipt case (perf,
/// 2026-11-28). `PKCS7SignedData` hands the elements it needs to swift-asn1;
/// `ReceiptReplayKey` reads the signed payload and the signatures from it.
///
/// Anything else (BER with indefinite lengths as Xcode writes, a tag or a
/// length out of the expected shape, bytes left over) is nil, and the caller
/// parses the whole receipt with swift-asn1 as before, which decides what is
/// malformed. Every length is checked against the bytes it lies in.
public struct SignedDataOutline: Sendable {
    /// `EncapsulatedContentInfo`, a SEQUENCE.
    public let encapsulatedContent: ArraySlice<UInt8>
    /// Each element of the certificate set, in order.
    public let certificates: [ArraySlice<UInt8>]
    /// `version`, an INTEGER.
    public let version: ArraySlice<UInt8>
    /// `signerInfos`, a SET.
    public let signerInfos: ArraySlice<UInt8>

    static let sequence: UInt8 = 0x30
    static let set: UInt8 = 0x31
    private static let integer: UInt8 = 0x02
    private static let objectIdentifier: UInt8 = 0x06
    static let contextZero: UInt8 = 0xA0
    private static let contextOne: UInt8 = 0xA1
    /// 1.2.840.113549.1.7.2 (signedData) as its DER element.
    private static let signedDataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]

    public init?(_ bytes: [UInt8]) {
        // ContentInfo ::= SEQUENCE { contentType OID, content [0] EXPLICIT SignedData }
        guard let contentInfo = Self.only(Self.sequence, in: bytes[...]),
              let parts = Self.elements(in: contentInfo), parts.count == 2,
              parts[0].elementsEqual(Self.signedDataOID),
              let explicit = Self.content(of: parts[1], tagged: Self.contextZero),
              let signedData = Self.only(Self.sequence, in: explicit),
              let signedDataFields = Self.elements(in: signedData)
        else { return nil }
        var fields = signedDataFields[...]
        // SignedData ::= SEQUENCE { version, digestAlgorithms SET, encapContentInfo SEQUENCE,
        //   certificates [0] IMPLICIT OPTIONAL, crls [1] IMPLICIT OPTIONAL, signerInfos SET }
        guard fields.count >= 4, fields[fields.startIndex].first == Self.integer,
              fields[fields.startIndex + 1].first == Self.set,
              fields[fields.startIndex + 2].first == Self.sequence
        else { return nil }
        version = fields.removeFirst()
        fields.removeFirst()
        encapsulatedContent = fields.removeFirst()
        if fields.first?.first == Self.contextZero {
            let element = fields.removeFirst()
            guard let set = Self.content(of: element, tagged: Self.contextZero),
                  let members = Self.elements(in: set)
            else { return nil }
            certificates = members
        } else {
            certificates = []
        }
        if fields.first?.first == Self.contextOne { fields.removeFirst() }
        guard fields.count == 1, fields[fields.startIndex].first == Self.set else { return nil }
        signerInfos = fields[fields.startIndex]
    }

    /// The content of `element` when its tag is `tag`.
    static func content(of element: ArraySlice<UInt8>, tagged tag: UInt8) -> ArraySlice<UInt8>? {
        guard element.first == tag, let (_, content) = header(in: element, at: element.startIndex) else { return nil }
        return content
    }

    /// The content of the one element that `bytes` holds, when its tag is `tag`.
    private static func only(_ tag: UInt8, in bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let elements = elements(in: bytes), elements.count == 1 else { return nil }
        return content(of: elements[0], tagged: tag)
    }

    /// The elements that follow each other in `bytes` and fill it exactly.
    static func elements(in bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>]? {
        var elements: [ArraySlice<UInt8>] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            guard let (end, _) = header(in: bytes, at: index) else { return nil }
            elements.append(bytes[index..<end])
            index = end
        }
        return elements
    }

    /// The end of the element that starts at `index`, and its content: a tag
    /// in one byte, a definite length in at most four bytes, within `bytes`.
    private static func header(in bytes: ArraySlice<UInt8>, at index: Int) -> (end: Int, content: ArraySlice<UInt8>)? {
        guard bytes.endIndex - index >= 2, bytes[index] & 0x1F != 0x1F else { return nil }
        let first = bytes[index + 1]
        var length = Int(first)
        var contentStart = index + 2
        if first >= 0x80 {
            let count = Int(first & 0x7F)
            guard (1...4).contains(count), bytes.endIndex - contentStart >= count else { return nil }
            length = bytes[contentStart..<(contentStart + count)].reduce(0) { $0 << 8 | Int($1) }
            contentStart += count
        }
        guard length <= bytes.endIndex - contentStart else { return nil }
        return (contentStart + length, bytes[contentStart..<(contentStart + length)])
    }
}
