// Shared by Tests/AppReceiptTests and Benchmarks/AppReceiptBench (a symbolic link there): plain bytes,
// no test framework.

/// Receipts made to cost their verifier as much as they can before any
/// signature or chain is checked: BER that a parser turns into many nodes,
/// and genuine receipts padded without touching what their signature covers.
/// Each fits a verify request's body under nginx's 2 MiB limit when asked to.
enum CraftedReceipts {
    /// The most receipt bytes a verify request carries: `receipt_data` is at
    /// most 1,400,000 base64 characters, within nginx's 2 MiB body.
    static let bodyLimitBytes = 1_400_000 / 4 * 3

    /// No signature and no certificate: a SignedData whose content, in BER
    /// with indefinite lengths, is split into `count` empty pieces (524,000 of
    /// them fit a request).
    static func emptyPieces(count: Int) -> [UInt8] {
        let pieces = repeated([0x04, 0x00], count)
        let content = indefinite(0x30, dataOID + indefinite(0xA0, indefinite(0x24, pieces)))
        let signedData = indefinite(0x30, [0x02, 0x01, 0x01] + [0x31, 0x00] + content + [0x31, 0x00])
        return indefinite(0x30, signedDataOID + indefinite(0xA0, signedData))
    }

    /// As many empty pieces as fit in `bytes`.
    static func emptyPieces(fitting bytes: Int) -> [UInt8] {
        emptyPieces(count: (bytes - 64) / 2)
    }

    /// `genuine` with its content as a constructed OCTET STRING of one-byte
    /// pieces: the same value, so the same signature.
    static func contentInOneBytePieces(_ genuine: [UInt8]) -> [UInt8] {
        rebuilt(genuine) { parts in
            let encapsulated = children(content(parts.encapsulatedContent[...]))
            let octetString = content(encapsulated[1])
            let value = content(octetString)
            let pieces = value.flatMap { [UInt8]([0x04, 0x01, $0]) }
            parts.encapsulatedContent = der(0x30, Array(encapsulated[0]) + der(0xA0, der(0x24, pieces)))
        }
    }

    /// `genuine` with its certificate set repeated `copies` times.
    static func certificateCopies(_ genuine: [UInt8], copies: Int) -> [UInt8] {
        rebuilt(genuine) { parts in
            let set = Array(content(parts.certificates[...]))
            parts.certificates = der(0xA0, repeated(set, copies))
        }
    }

    /// `genuine` with its first certificate alone (the leaf, in Apple's order).
    static func firstCertificateOnly(_ genuine: [UInt8]) -> [UInt8] {
        rebuilt(genuine) { parts in
            parts.certificates = der(0xA0, Array(children(content(parts.certificates[...]))[0]))
        }
    }

    /// As many copies of `genuine`'s certificates as fit in `bytes`.
    static func certificateCopies(_ genuine: [UInt8], fitting bytes: Int) -> [UInt8] {
        let set = rebuiltParts(genuine).certificates.count
        return certificateCopies(genuine, copies: max(1, (bytes - genuine.count) / set))
    }

    /// `genuine` with `count` NULLs in its (unused) CRLs field, of indefinite
    /// length when asked: BER, which is parsed whole.
    static func nulls(_ genuine: [UInt8], count: Int, indefinite: Bool = false) -> [UInt8] {
        rebuilt(genuine) { parts in
            let nulls = repeated([0x05, 0x00], count)
            parts.revocations = indefinite ? Self.indefinite(0xA1, nulls) : der(0xA1, nulls)
        }
    }

    /// `genuine` with its CRLs field holding `depth` nested SEQUENCEs.
    static func nested(_ genuine: [UInt8], depth: Int) -> [UInt8] {
        rebuilt(genuine) { parts in
            parts.revocations = der(0xA1, (0..<depth).reduce([UInt8]()) { inner, _ in der(0x30, inner) })
        }
    }

    /// `genuine`'s certificates and signer over `count` bytes of other
    /// content: its chain is known, so what it costs is the content's digest
    /// before the signature fails.
    static func otherContent(_ genuine: [UInt8], count: Int) -> [UInt8] {
        rebuilt(genuine) { parts in
            parts.encapsulatedContent = der(0x30, dataOID + der(0xA0, der(0x04, [UInt8](repeating: 0x31, count: count))))
        }
    }

    /// As much other content as fits in `bytes`.
    static func otherContent(_ genuine: [UInt8], fitting bytes: Int) -> [UInt8] {
        otherContent(genuine, count: bytes - genuine.count)
    }

    // MARK: DER

    /// The fields of a DER SignedData that crafting changes.
    struct Parts {
        var version: [UInt8]
        var digestAlgorithms: [UInt8]
        var encapsulatedContent: [UInt8]
        var certificates: [UInt8]
        var revocations: [UInt8]
        var signerInfos: [UInt8]
    }

    private static let signedDataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
    private static let dataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]

    static func rebuiltParts(_ genuine: [UInt8]) -> Parts {
        let contentInfo = children(content(genuine[...]))
        let fields = children(content(content(contentInfo[1])))
        let certificates = fields.first { $0.first == 0xA0 }.map(Array.init) ?? []
        let revocations = fields.first { $0.first == 0xA1 }.map(Array.init) ?? []
        return Parts(
            version: Array(fields[0]), digestAlgorithms: Array(fields[1]), encapsulatedContent: Array(fields[2]),
            certificates: certificates, revocations: revocations, signerInfos: Array(fields[fields.count - 1]))
    }

    private static func rebuilt(_ genuine: [UInt8], _ change: (inout Parts) -> Void) -> [UInt8] {
        var parts = rebuiltParts(genuine)
        change(&parts)
        let signedData = der(0x30, parts.version + parts.digestAlgorithms + parts.encapsulatedContent + parts.certificates
            + parts.revocations + parts.signerInfos)
        return der(0x30, signedDataOID + der(0xA0, signedData))
    }

    static func repeated(_ bytes: [UInt8], _ count: Int) -> [UInt8] {
        Array([[UInt8]](repeating: bytes, count: count).joined())
    }

    static func der(_ tag: UInt8, _ body: [UInt8]) -> [UInt8] {
        guard body.count >= 0x80 else { return [tag, UInt8(body.count)] + body }
        var length: [UInt8] = []
        var rest = body.count
        while rest > 0 {
            length.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [tag, 0x80 | UInt8(length.count)] + length + body
    }

    static func indefinite(_ tag: UInt8, _ body: [UInt8]) -> [UInt8] {
        [tag, 0x80] + body + [0x00, 0x00]
    }

    /// The content of the definite-length element at the start of `element`.
    private static func content(_ element: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let (start, length) = header(element, at: element.startIndex)
        return element[start..<(start + length)]
    }

    /// The definite-length elements that fill `bytes`.
    private static func children(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var elements: [ArraySlice<UInt8>] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let (start, length) = header(bytes, at: index)
            elements.append(bytes[index..<(start + length)])
            index = start + length
        }
        return elements
    }

    private static func header(_ bytes: ArraySlice<UInt8>, at index: Int) -> (contentStart: Int, length: Int) {
        let first = bytes[index + 1]
        guard first >= 0x80 else { return (index + 2, Int(first)) }
        let count = Int(first & 0x7F)
        let length = bytes[(index + 2)..<(index + 2 + count)].reduce(0) { $0 << 8 | Int($1) }
        return (index + 2 + count, length)
    }
}
