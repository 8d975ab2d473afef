import X509
import _CryptoExtras

/// A receipt's leaf and intermediate found to chain to a trusted root with
/// Apple's markers: what a verification needs of them afterwards, cached by
/// their DER once a receipt they signed has checked (`AppReceiptVerifier`).
struct ReceiptChain: Sendable {
    /// The leaf's key, which signs the receipt. Kept as swift-crypto's RSA key
    /// rather than X.509's `Certificate.PublicKey`, an enum whose case rides
    /// in the reference's spare bits, where LeakSanitizer cannot see it: the
    /// fuzz run took every cached key for a leak.
    let leafKey: _RSA.Signing.PublicKey
    /// When all three certificates (leaf, intermediate, root) are valid, in ms
    /// since 1970, both ends included; nil when they never are at once.
    let validity: ClosedRange<Int64>?
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
