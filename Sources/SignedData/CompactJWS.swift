import IAPCore

/// A compact JWS (RFC 7515) taken apart, nothing verified yet: the decoded
/// header, payload and signature, and the bytes the signature covers.
public struct CompactJWS: Sendable {
    /// `base64url(header) "." base64url(payload)`, as sent: what ES256 signs.
    public let signingInput: [UInt8]
    public let header: JSONObject
    /// The payload as Apple wrote it, kept byte for byte.
    public let payload: [UInt8]
    public let signature: [UInt8]

    /// Splits `text` into its three parts and decodes them. Only the header is
    /// parsed as JSON here; the payload is the verifier's to read.
    /// - Throws: `SignedDataError.malformed` for anything but three non-empty
    ///   parts of base64url whose first is a JSON object.
    public init(_ text: [UInt8]) throws(SignedDataError) {
        let dot = UInt8(ascii: ".")
        guard let firstDot = text.firstIndex(of: dot),
              let secondDot = text[(firstDot + 1)...].firstIndex(of: dot),
              !text[(secondDot + 1)...].contains(dot),
              firstDot > 0, secondDot > firstDot + 1, secondDot < text.count - 1,
              let headerBytes = Base64.decodeURL(text[..<firstDot]),
              let payload = Base64.decodeURL(text[(firstDot + 1)..<secondDot]),
              let signature = Base64.decodeURL(text[(secondDot + 1)...]),
              let header = (try? JSONParser.parse(headerBytes))?.objectValue
        else { throw SignedDataError.malformed }
        self.signingInput = Array(text[..<secondDot])
        self.header = header
        self.payload = payload
        self.signature = signature
    }

    /// The DER of each certificate in the header's `x5c`, once `alg` is
    /// checked: exactly three, leaf first.
    /// - Throws: `unsupportedAlgorithm` unless `alg` is `ES256`;
    ///   `wrongCertificateCount` unless `x5c` lists three; `malformed` when
    ///   `x5c` is missing or holds something other than standard base64.
    public func certificateChainDER() throws(SignedDataError) -> [[UInt8]] {
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
