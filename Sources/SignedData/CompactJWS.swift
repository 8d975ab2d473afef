import IAPCore

/// A compact JWS (RFC 7515) taken apart, nothing verified yet: the header as
/// sent, the decoded payload and signature, and the bytes the signature covers.
public struct CompactJWS: Sendable {
    /// `base64url(header) "." base64url(payload)`, as sent: what ES256 signs.
    public let signingInput: [UInt8]
    /// The first part as sent, still base64url (`alg` and the `x5c` chain).
    public let encodedHeader: ArraySlice<UInt8>
    /// The payload as Apple wrote it, kept byte for byte.
    public let payload: [UInt8]
    public let signature: [UInt8]

    /// Splits `text` into its three parts and decodes the payload and the
    /// signature; the header is decoded by `header()` when it is needed.
    /// - Throws: `SignedDataError.malformed` for anything but three non-empty
    ///   parts, the last two base64url.
    public init(_ text: [UInt8]) throws(SignedDataError) {
        let dot = UInt8(ascii: ".")
        guard let firstDot = text.firstIndex(of: dot),
              let secondDot = text[(firstDot + 1)...].firstIndex(of: dot),
              !text[(secondDot + 1)...].contains(dot),
              firstDot > 0, secondDot > firstDot + 1, secondDot < text.count - 1,
              let payload = Base64.decodeURL(text[(firstDot + 1)..<secondDot]),
              let signature = Base64.decodeURL(text[(secondDot + 1)...])
        else { throw SignedDataError.malformed }
        self.signingInput = Array(text[..<secondDot])
        self.encodedHeader = signingInput[..<firstDot]
        self.payload = payload
        self.signature = signature
    }

    /// The header, decoded.
    /// - Throws: `malformed` unless the first part is base64url of a JSON object.
    public func header() throws(SignedDataError) -> JSONObject {
        guard let bytes = Base64.decodeURL(encodedHeader), let header = (try? JSONParser.parse(bytes))?.objectValue
        else { throw SignedDataError.malformed }
        return header
    }

    /// The DER of each certificate in the header's `x5c`, once `alg` is
    /// checked: exactly three, leaf first.
    /// - Throws: `malformed` for a header that does not decode, or an `x5c`
    ///   missing or holding something other than standard base64;
    ///   `unsupportedAlgorithm` unless `alg` is `ES256`; `wrongCertificateCount`
    ///   unless `x5c` lists three.
    public func certificateChainDER() throws(SignedDataError) -> [[UInt8]] {
        let header = try header()
        guard header["alg"]?.stringValue == "ES256" else { throw SignedDataError.unsupportedAlgorithm }
        guard let x5c = header["x5c"]?.arrayValue else { throw SignedDataError.malformed }
        guard x5c.count == 3 else { throw SignedDataError.wrongCertificateCount }
        var chain: [[UInt8]] = []
        for entry in x5c {
            guard let text = entry.stringValue, let der = Base64.decode(text), !der.isEmpty else {
                throw SignedDataError.malformed
            }
            chain.append(der)
        }
        return chain
    }
}
