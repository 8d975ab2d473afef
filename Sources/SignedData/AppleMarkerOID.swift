import SwiftASN1

/// The extensions by which Apple marks the certificates that sign App Store
/// data. Without checking them, any certificate issued under Apple's root (a
/// developer's, say) could sign a transaction.
enum AppleMarkerOID {
    /// On the intermediate, Apple Worldwide Developer Relations CA.
    static let intermediate: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    /// On the leaf, the App Store receipt signing certificate.
    static let leaf: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
}
