import IAPCore
import SwiftASN1
import X509

/// The parts of a PKCS#7 SignedData (RFC 2315, CMS RFC 5652) an app receipt is
/// checked with, read by swift-asn1's BER parser: DER (Apple's receipts) and
/// BER with indefinite lengths and constructed OCTET STRINGs (Xcode's) alike.
/// Before it, the receipt's nodes, pieces and depth are bounded on its
/// headers alone (`ReceiptShapeBounds`), so that no input costs the parse
/// much more than a receipt does; the parser checks every length against the
/// input, so a hostile length allocates nothing; what is kept are slices of
/// the input.
///
/// Only the outer structure is read here. The certificates are handed to
/// swift-certificates as they are, and the signature to its RSA check. In DER
/// (Apple's receipts) the outer structure is found first by its tags and
/// lengths (`SignedDataOutline`), so that the certificates are not parsed
/// into nodes unless their chain is not cached yet.
struct PKCS7SignedData {
    /// Who signed, and how.
    struct Signer {
        /// The signer's certificate, as SignerInfo names it.
        enum Identity {
            case issuerAndSerialNumber(issuer: DistinguishedName, serialNumber: Certificate.SerialNumber)
            case subjectKeyIdentifier(ArraySlice<UInt8>)
        }

        let identity: Identity
        let digestAlgorithm: ASN1ObjectIdentifier
        /// The signed attributes as signed (DER, a SET), or nil when the
        /// signature is over the content itself (Apple's receipts).
        let signedAttributes: SignedAttributes?
        let signatureAlgorithm: ASN1ObjectIdentifier
        let signature: ArraySlice<UInt8>
    }

    /// A signer's authenticated attributes: the signature covers their DER,
    /// and their message digest stands for the content.
    struct SignedAttributes {
        /// `SET OF Attribute` in DER, the bytes the signature is over.
        let der: [UInt8]
        /// The `messageDigest` attribute's value, nil when absent.
        let messageDigest: ArraySlice<UInt8>?
        /// The `contentType` attribute's value, nil when absent.
        let contentType: ASN1ObjectIdentifier?
    }

    /// The signed content: the receipt's payload.
    let content: ArraySlice<UInt8>
    /// Each certificate's encoding, in receipt order.
    let certificates: [ArraySlice<UInt8>]
    let signer: Signer

    /// - Throws: first a bound of `ReceiptShapeBounds` the receipt exceeds;
    ///   `malformed` when the bytes are not a ContentInfo of SignedData,
    ///   `unsupportedContent` when its content is not attached `data` or it
    ///   has other than one signer; `tooManyCertificates`.
    init(berEncoded bytes: [UInt8]) throws(AppReceiptError) {
        try ReceiptShapeBounds.check(bytes)
        self = try Self(withinBounds: bytes)
        guard certificates.count <= ReceiptShapeBounds.maxCertificates else { throw AppReceiptError.tooManyCertificates }
    }

    private init(withinBounds bytes: [UInt8]) throws(AppReceiptError) {
        do {
            if let outline = SignedDataOutline(bytes) {
                self = try Self(outline: outline)
                return
            }
            let root = try BER.parse(bytes)
            self = try BER.sequence(root, identifier: .sequence) { nodes in
                guard try ASN1ObjectIdentifier(berEncoded: &nodes) == PKCS7OID.signedData else {
                    throw AppReceiptError.malformed
                }
                let signedData = try BER.explicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { $0 }
                guard nodes.next() == nil else { throw AppReceiptError.malformed }
                return try Self(signedData: signedData)
            }
        } catch let refusal as AppReceiptError {
            throw refusal
        } catch {
            throw AppReceiptError.malformed
        }
    }

    private init(signedData node: ASN1Node) throws {
        self = try BER.sequence(node, identifier: .sequence) { nodes in
            _ = try Int(berEncoded: &nodes)  // version
            guard try required(nodes.next()).identifier == .set else { throw AppReceiptError.malformed }  // digestAlgorithms
            let content = try Self.attachedData(try required(nodes.next()))
            var certificates: [ArraySlice<UInt8>] = []
            var next = nodes.next()
            if let tagged = next, tagged.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                guard case .constructed(let children) = tagged.content else { throw AppReceiptError.malformed }
                certificates = children.map(\.encodedBytes)
                next = nodes.next()
            }
            if let tagged = next, tagged.identifier == ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific) {
                next = nodes.next()  // CRLs: not used
            }
            guard let signerInfos = next, nodes.next() == nil else { throw AppReceiptError.malformed }
            let signers = try BER.set(signerInfos, identifier: .set) { signerNodes in
                var signers: [ASN1Node] = []
                while let signer = signerNodes.next() { signers.append(signer) }
                return signers
            }
            guard signers.count == 1 else { throw AppReceiptError.unsupportedContent }
            return Self(content: content, certificates: certificates, signer: try Signer(berEncoded: signers[0]))
        }
    }

    /// The DER structure `outline` found, its certificates left as bytes.
    private init(outline: SignedDataOutline) throws {
        _ = try Int(berEncoded: try BER.parse(outline.version))
        let signers = try BER.set(try BER.parse(outline.signerInfos), identifier: .set) { signerNodes in
            var signers: [ASN1Node] = []
            while let signer = signerNodes.next() { signers.append(signer) }
            return signers
        }
        guard signers.count == 1 else { throw AppReceiptError.unsupportedContent }
        self.init(
            content: try Self.attachedData(try BER.parse(outline.encapsulatedContent)), certificates: outline.certificates,
            signer: try Signer(berEncoded: signers[0]))
    }

    private init(content: ArraySlice<UInt8>, certificates: [ArraySlice<UInt8>], signer: Signer) {
        self.content = content
        self.certificates = certificates
        self.signer = signer
    }

    /// The bytes of an encapsulated `data` content (`[0] EXPLICIT OCTET STRING`,
    /// constructed or not).
    private static func attachedData(_ node: ASN1Node) throws -> ArraySlice<UInt8> {
        try BER.sequence(node, identifier: .sequence) { nodes in
            guard try ASN1ObjectIdentifier(berEncoded: &nodes) == PKCS7OID.data else {
                throw AppReceiptError.unsupportedContent
            }
            guard let explicit = nodes.next(), nodes.next() == nil else { throw AppReceiptError.unsupportedContent }
            return try BER.explicitlyTagged(explicit, tagNumber: 0, tagClass: .contextSpecific) {
                try ASN1OctetString(berEncoded: $0).bytes
            }
        }
    }
}

extension PKCS7SignedData.Signer {
    /// SignerInfo: version, sid, digestAlgorithm, [0] signedAttrs, signatureAlgorithm, signature, [1] unsignedAttrs.
    init(berEncoded node: ASN1Node) throws {
        self = try BER.sequence(node, identifier: .sequence) { nodes in
            _ = try Int(berEncoded: &nodes)  // version
            guard let sid = nodes.next() else { throw AppReceiptError.malformed }
            let identity: Identity
            if sid.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                guard case .primitive(let keyID) = sid.content else { throw AppReceiptError.malformed }
                identity = .subjectKeyIdentifier(keyID)
            } else {
                identity = try BER.sequence(sid, identifier: .sequence) { parts in
                    guard let issuer = parts.next(), let serial = parts.next(), parts.next() == nil,
                          serial.identifier == .integer, case .primitive(let serialBytes) = serial.content
                    else { throw AppReceiptError.malformed }
                    return .issuerAndSerialNumber(
                        issuer: try DistinguishedName(derEncoded: issuer),
                        serialNumber: Certificate.SerialNumber(bytes: serialBytes))
                }
            }
            let digestAlgorithm = try Self.algorithm(nodes.next())
            var next = nodes.next()
            var signedAttributes: PKCS7SignedData.SignedAttributes?
            if let tagged = next, tagged.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                signedAttributes = try PKCS7SignedData.SignedAttributes(berEncoded: tagged)
                next = nodes.next()
            }
            let signatureAlgorithm = try Self.algorithm(next)
            let signature = try ASN1OctetString(berEncoded: &nodes).bytes
            return Self(
                identity: identity, digestAlgorithm: digestAlgorithm, signedAttributes: signedAttributes,
                signatureAlgorithm: signatureAlgorithm, signature: signature)
        }
    }

    /// The OID of an AlgorithmIdentifier (its parameters, NULL or absent, are not used).
    private static func algorithm(_ node: ASN1Node?) throws -> ASN1ObjectIdentifier {
        try BER.sequence(try required(node), identifier: .sequence) { parts in
            let oid = try ASN1ObjectIdentifier(berEncoded: &parts)
            _ = parts.next()
            guard parts.next() == nil else { throw AppReceiptError.malformed }
            return oid
        }
    }
}

extension PKCS7SignedData.SignedAttributes {
    /// `[0] IMPLICIT SET OF Attribute`; the signature is over the same SET in
    /// DER, re-tagged `SET` (RFC 5652 5.4), its length written definite.
    init(berEncoded node: ASN1Node) throws {
        guard case .constructed(let attributes) = node.content else { throw AppReceiptError.malformed }
        var body: [UInt8] = []
        var messageDigest: ArraySlice<UInt8>?
        var contentType: ASN1ObjectIdentifier?
        for attribute in attributes {
            body += attribute.encodedBytes
            try BER.sequence(attribute, identifier: .sequence) { parts in
                let type = try ASN1ObjectIdentifier(berEncoded: &parts)
                guard let values = parts.next(), parts.next() == nil, values.identifier == .set,
                      case .constructed(let members) = values.content
                else { throw AppReceiptError.malformed }
                let first = members.first { _ in true }
                switch type {
                case PKCS7OID.messageDigest: messageDigest = try first.map { try ASN1OctetString(berEncoded: $0).bytes }
                case PKCS7OID.contentType: contentType = try first.map { try ASN1ObjectIdentifier(berEncoded: $0) }
                default: break
                }
            }
        }
        self.init(der: [0x31] + DERLength.encoded(body.count) + body, messageDigest: messageDigest, contentType: contentType)
    }
}

/// `node`, or `malformed` when the structure ends early.
func required(_ node: ASN1Node?) throws(AppReceiptError) -> ASN1Node {
    guard let node else { throw AppReceiptError.malformed }
    return node
}

/// A DER length: short form below 128, else the long form's big-endian bytes.
enum DERLength {
    static func encoded(_ length: Int) -> [UInt8] {
        guard length >= 0x80 else { return [UInt8(length)] }
        var bytes: [UInt8] = []
        var rest = length
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }
}

/// The object identifiers of PKCS#7 and its algorithms that receipts use.
enum PKCS7OID {
    static let data: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]
    static let signedData: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]
    static let contentType: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 3]
    static let messageDigest: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 4]
    static let sha1: ASN1ObjectIdentifier = [1, 3, 14, 3, 2, 26]
    static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 1]
    static let sha1WithRSAEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 5]
    static let sha256WithRSAEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 11]
}
