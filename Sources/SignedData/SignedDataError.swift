/// Why a JWS signed by Apple was refused: one case per check of step 2 of
/// docs/api.md "POST /v1/transactions/verify", so that logs and metrics can
/// count each. Every case is the client's 400 `invalid_signed_data`; none says
/// anything about the service's health.
public enum SignedDataError: String, Error, Equatable, Sendable, CaseIterable {
    /// Not three parts of base64url, a header or certificate that does not
    /// parse, or an `x5c` that is not a list of base64 strings.
    case malformed
    /// Header `alg` other than `ES256` (`none`, `HS256`, ...), or absent.
    case unsupportedAlgorithm
    /// `x5c` does not hold exactly three certificates (leaf, intermediate, root).
    case wrongCertificateCount
    /// The payload is not a JSON object, or lacks a field the transaction
    /// needs (`signedDate` first of all), or has one of the wrong type.
    case invalidPayload
    /// The leaf and intermediate do not chain to one of the configured roots.
    case untrustedChain
    /// The intermediate lacks `1.2.840.113635.100.6.2.1` or the leaf
    /// `1.2.840.113635.100.6.11.1`: a certificate Apple issued for something
    /// else (a developer's, say) chains to the same root.
    case missingMarkerOID
    /// A certificate of the chain was not valid at the payload's `signedDate`.
    case expiredAtSignedDate
    /// The leaf's key is not an EC P-256 key, so it cannot make an ES256 signature.
    case unsupportedLeafKey
    /// The signature is not 64 bytes, or does not check with the leaf's key
    /// over `header.payload` (another key signed it, or a part was changed).
    case badSignature
}
