/// Bounds on a receipt's shape, checked on its tags and lengths alone before
/// any of it is parsed: BER lets a few bytes stand for a node (an empty piece
/// of a constructed OCTET STRING is two), and swift-asn1's parse of a node
/// costs far more than reading its header, so 1.4 MB of empty pieces cost a
/// quarter second and 75 MB before any signature or chain check. Apple's
/// receipts have three certificates, under 300 nodes, no pieces (DER) and a
/// depth of 10; Xcode's BER ones a few pieces. Each bound leaves room for
/// more, and a receipt beyond one is refused by its own check, cheaply: the
/// walk stops at the first node too many, and allocates nothing.
///
/// Every header is read as swift-asn1 reads it (one or more tag bytes, a
/// short, long or, on a constructed element, indefinite length, each length
/// within its parent), so that what the walk accepts is all that the parser
/// can see; what it cannot read is `malformed`, as the parser would say.
/// Primitive contents are skipped: an OCTET STRING's content, the receipt's
/// payload, is read only after its signature checked.
enum ReceiptShapeBounds {
    /// Certificates in the receipt (`AppReceiptError.tooManyCertificates`).
    static let maxCertificates = 8
    /// Elements in the receipt, pieces and certificates' included (`tooManyNodes`).
    static let maxNodes = 1024
    /// Pieces of constructed OCTET STRINGs, all together (`tooManyPieces`).
    static let maxPieces = 256
    /// Elements within elements, the outermost counting 1 (`nestedTooDeep`).
    static let maxDepth = 16

    /// A constructed OCTET STRING's tag, whose elements are its pieces.
    private static let constructedOctetString: UInt8 = 0x24

    /// - Throws: the first bound exceeded, or `malformed` when a header does
    ///   not read.
    static func check(_ bytes: [UInt8]) throws(AppReceiptError) {
        try bytes.withUnsafeBufferPointer { buffer throws(AppReceiptError) in
            var walk = Walk(bytes: buffer)
            try walk.run()
        }
    }

    private struct Walk {
        /// An element whose content is being walked.
        struct Open {
            let tag: UInt8
            /// Where its content ends; nil for an indefinite length, ended by two zero bytes.
            let end: Int?
        }

        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var nodes = 0
        var pieces = 0
        var open: [Open] = []

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
            open.reserveCapacity(ReceiptShapeBounds.maxDepth)
        }

        /// Walks the first element of the input; what may follow it is the parser's to refuse.
        mutating func run() throws(AppReceiptError) {
            repeat {
                if let parent = open.last {
                    if let end = parent.end, index == end {
                        open.removeLast()
                        continue
                    }
                    if parent.end == nil, index + 2 <= bytes.count, bytes[index] == 0, bytes[index + 1] == 0 {
                        index += 2
                        open.removeLast()
                        continue
                    }
                }
                try element()
            } while !open.isEmpty
        }

        /// Reads the header at `index`, counts the element, and enters it
        /// (constructed) or skips its content (primitive).
        private mutating func element() throws(AppReceiptError) {
            let limit = open.last?.end ?? bytes.count
            guard limit - index >= 2 else { throw .malformed }
            let tag = bytes[index]
            index += 1
            if tag & 0x1F == 0x1F {  // the tag number in the following bytes, 7 bits each
                while true {
                    guard index < limit else { throw .malformed }
                    let byte = bytes[index]
                    index += 1
                    if byte & 0x80 == 0 { break }
                }
            }
            guard index < limit else { throw .malformed }
            nodes += 1
            if nodes > ReceiptShapeBounds.maxNodes { throw .tooManyNodes }
            if open.count >= ReceiptShapeBounds.maxDepth { throw .nestedTooDeep }
            if open.last?.tag == ReceiptShapeBounds.constructedOctetString {
                pieces += 1
                if pieces > ReceiptShapeBounds.maxPieces { throw .tooManyPieces }
            }
            let constructed = tag & 0x20 != 0
            let first = bytes[index]
            index += 1
            let end: Int?
            if first == 0x80 {
                guard constructed else { throw .malformed }
                end = nil
            } else if first & 0x80 == 0 {
                end = index + Int(first)
            } else {
                let count = Int(first & 0x7F)
                guard count <= 8, limit - index >= count else { throw .malformed }
                var length: UInt64 = 0
                for _ in 0..<count {
                    length = length << 8 | UInt64(bytes[index])
                    index += 1
                }
                guard length <= UInt64(limit - index) else { throw .malformed }
                end = index + Int(length)
            }
            if let end, end > limit { throw .malformed }
            guard constructed else {
                index = end!  // a primitive's length is definite (checked above)
                return
            }
            open.append(Open(tag: tag, end: end))
        }
    }
}
