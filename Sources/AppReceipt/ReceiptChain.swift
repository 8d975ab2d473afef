import X509
import _CryptoExtras

/// A receipt's leaf and intermediate found to chain to a trusted root with
/// Apple's markers: what a verification needs of them afterwards, cached by
/// the leaf's DER once a receipt it signed has checked (`AppReceiptVerifier`).
struct ReceiptChain: Sendable {
    /// The leaf as encoded in the receipt, the cache's key.
    let leafDER: [UInt8]
    /// The intermediate as encoded: a receipt must carry it, as one whose
    /// chain is not cached must.
    let intermediateDER: [UInt8]
    /// The leaf's issuer, serial number and subject key identifier, for the
    /// signer's identity to name (`PKCS7SignedData.Signer.Identity`).
    let leafIssuer: DistinguishedName
    let leafSerialNumber: Certificate.SerialNumber
    let leafKeyIdentifier: [UInt8]?
    /// The leaf's key, which signs the receipt. Kept as swift-crypto's RSA key
    /// rather than X.509's `Certificate.PublicKey`, an enum whose case rides
    /// in the reference's spare bits, where LeakSanitizer cannot see it: the
    /// fuzz run took every cached key for a leak.
    let leafKey: _RSA.Signing.PublicKey
    /// When all three certificates (leaf, intermediate, root) are valid, in ms
    /// since 1970, both ends included; nil when they never are at once.
    let validity: ClosedRange<Int64>?

    /// Whether it signs a receipt with these certificates and this signer:
    /// the signer names the leaf, and the intermediate is among them.
    func signs(_ signedData: PKCS7SignedData) -> Bool {
        let named: Bool
        switch signedData.signer.identity {
        case .issuerAndSerialNumber(let issuer, let serialNumber):
            named = issuer == leafIssuer && serialNumber == leafSerialNumber
        case .subjectKeyIdentifier(let keyID):
            named = leafKeyIdentifier.map { keyID.elementsEqual($0) } ?? false
        }
        return named && signedData.certificates.contains { $0.elementsEqual(intermediateDER) }
    }
}

extension Certificate {
    /// When it starts and stops being valid, in ms since 1970.
    var validityMs: ClosedRange<Int64>? {
        let from = Int64((notValidBefore.timeIntervalSince1970 * 1000).rounded(.down))
        let until = Int64((notValidAfter.timeIntervalSince1970 * 1000).rounded(.down))
        return from <= until ? from...until : nil
    }
}

extension ClosedRange<Int64> {
    /// The moments in both, nil when none.
    func overlap(_ other: ClosedRange<Int64>?) -> ClosedRange<Int64>? {
        guard let other, lowerBound <= other.upperBound, other.lowerBound <= upperBound else { return nil }
        return Swift.max(lowerBound, other.lowerBound)...Swift.min(upperBound, other.upperBound)
    }
}
