/// Why an app receipt was refused: one case per check of docs/apple.md "App
/// receipts checked here", in the order they run, but for the bounds on the
/// receipt's shape (the last four), which run first, before any of it is parsed
/// (`ReceiptShapeBounds`). The raw values are stable: they are what the
/// receipt's audit row (`receipts.signed_data_error`, beside the JWS refusals
/// of `SignedDataError`, whose names they share where the check is the same)
/// and the metrics' `check` label say. Every case is the client's `not_paid`
/// (as Apple's 21002/21003); none says anything about the service's health, and
/// the client is told none of them.
public enum AppReceiptError: String, Error, Equatable, Sendable, CaseIterable {
    /// Not BER or DER (truncated, lengths beyond the input), or not a PKCS#7
    /// ContentInfo holding SignedData.
    case malformed
    /// SignedData whose content is not of type `data` or is absent (detached),
    /// or that has other than exactly one signer.
    case unsupportedContent
    /// The signer's certificate (by issuer and serial number) is not in the
    /// receipt, or a certificate there does not parse as X.509.
    case missingCertificate
    /// The leaf has no intermediate in the receipt, or leaf and intermediate do
    /// not chain to a configured root (Xcode's self-signed certificate, a root
    /// of one's own).
    case untrustedChain
    /// The leaf lacks the receipt-signing marker `1.2.840.113635.100.6.11.1`,
    /// or the intermediate `1.2.840.113635.100.6.2.1`: a certificate Apple
    /// issued for something else.
    case missingMarkerOID
    /// The signer's algorithm is not RSA with SHA-1 or SHA-256, or the leaf's key is not RSA.
    case unsupportedSignature
    /// The signature does not check with the leaf's key over the content (or
    /// over the signed attributes, whose message digest must be the content's).
    case badSignature
    /// The payload is not a SET of (type, version, value), or lacks its bundle
    /// id or creation date, or an in-app purchase lacks its product or
    /// transaction id, or a value is not of its type.
    case invalidPayload
    /// A certificate of the chain was not valid at the receipt's creation date
    /// (field 12).
    case expiredAtCreationDate
    /// Environment (field 0) other than `Production` or `ProductionSandbox`:
    /// `Xcode` among others, or none.
    case unsupportedEnvironment
    /// More elements than a receipt has (`ReceiptShapeBounds.maxNodes`),
    /// found before any is parsed: BER that would cost its parse far more
    /// than its bytes.
    case tooManyNodes
    /// More pieces of constructed OCTET STRINGs than a receipt has
    /// (`ReceiptShapeBounds.maxPieces`), found before any is parsed.
    case tooManyPieces
    /// Elements nested deeper than a receipt's (`ReceiptShapeBounds.maxDepth`),
    /// found before any is parsed.
    case nestedTooDeep
    /// More certificates than a receipt carries
    /// (`ReceiptShapeBounds.maxCertificates`; Apple sends 3), found before
    /// any is parsed.
    case tooManyCertificates
}
