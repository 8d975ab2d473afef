import SwiftASN1
import X509

/// The path-validation policy for a receipt's chain beside RFC 5280's: exactly
/// leaf, intermediate, root, the leaf carrying Apple's receipt-signing marker
/// `1.2.840.113635.100.6.11.1` and the intermediate `1.2.840.113635.100.6.2.1`.
/// Without them, any certificate issued under Apple's root (a developer's,
/// say) could sign a receipt.
struct ReceiptMarkerPolicy: VerifierPolicy {
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    /// The markers are Apple's to mark critical or not; either way they are handled here.
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [Self.leafMarker, Self.intermediateMarker]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(reason: "a receipt's chain is leaf, intermediate and root, not \(chain.count) certificates")
        }
        guard chain[0].extensions[oid: Self.leafMarker] != nil else {
            return .failsToMeetPolicy(reason: "the leaf lacks the receipt-signing marker OID")
        }
        guard chain[1].extensions[oid: Self.intermediateMarker] != nil else {
            return .failsToMeetPolicy(reason: "the intermediate lacks Apple's intermediate marker OID")
        }
        return .meetsPolicy
    }
}
