import Foundation
import IAPCore
import SignedData
import Synchronization
@_spi(DisableValidityCheck) import X509
import _CryptoExtras

/// Checks an iOS 7+ app receipt with no network call, as docs/apple.md "App
/// receipts checked here" says, in this order: the PKCS#7 SignedData structure
/// (DER or BER, `data` content, one signer); the signer's leaf and its
/// intermediate, from the receipt, chained to one of `roots` with
/// swift-certificates' `Verifier` (RFC 5280 and Apple's marker OIDs,
/// `ReceiptMarkerPolicy`); the RSA signature with the leaf's key; the payload;
/// every certificate valid at the receipt's creation date (field 12), not now:
/// Apple's signing certificates expire while the receipts they signed stay
/// valid; and the environment (`Production`, or `ProductionSandbox` read as
/// `Sandbox`).
///
/// Pure CPU work, safe to call from several threads at once. Path validations
/// are cached as `SignedDataVerifier` caches them (`VerifiedChainCache`), once
/// a receipt they signed has checked, signature included, so that a receipt
/// from a known leaf costs its structure's reading, one RSA check and the
/// payload's reading, and a refused one leaves nothing behind. The key is the
/// leaf's DER as the receipt carries it (Apple's receipts from one leaf carry
/// the same bytes), so a cached receipt parses no certificate at all, and one
/// padded with other certificates or with its signer's identity written
/// otherwise finds the same entry. What is cached does not depend on time:
/// validity at each receipt's creation date is checked on every call.
public final class AppReceiptVerifier: Sendable {
    private let roots: CertificateStore
    private let chains: VerifiedChainCache<ReceiptChain>
    private let pathValidations = Atomic<Int>(0)

    /// - Parameter cacheCapacity: verified (leaf, intermediate) pairs kept.
    public init(roots: TrustedRoots = .appleReceipts, cacheCapacity: Int = 16) {
        self.roots = CertificateStore(roots.certificates)
        self.chains = VerifiedChainCache(capacity: cacheCapacity)
    }

    /// The receipt, checked and read.
    /// - Throws: the check that failed first.
    public func verify(_ receipt: [UInt8]) throws(AppReceiptError) -> VerifiedAppReceipt {
        let signedData = try PKCS7SignedData(berEncoded: receipt)
        let known = knownChain(signing: signedData)
        let chain: ReceiptChain
        if let known {
            chain = known
        } else {
            let (leaf, intermediate) = try SignerCertificates.find(in: signedData)
            chain = try verifiedChain(leafDER: leaf, intermediateDER: intermediate)
        }
        try ReceiptSignature.check(signedData, key: chain.leafKey)
        let payload = try AppReceiptPayload(berEncoded: signedData.content)
        // Only now: the leaf's key signed this receipt, so the pair is one a trusted leaf signs with.
        if known == nil { chains.insert(chain, for: Self.key(leaf: chain.leafDER)) }
        guard let validity = chain.validity, validity.contains(payload.creationDateMs) else {
            throw AppReceiptError.expiredAtCreationDate
        }
        guard let environment = payload.acceptedEnvironment else { throw AppReceiptError.unsupportedEnvironment }
        return VerifiedAppReceipt(payload: payload, environment: environment, reply: try payload.appleReply(environment: environment))
    }

    /// The cached chain of one of the receipt's certificates that signs it
    /// (`ReceiptChain.signs`): found by the certificates themselves, so that
    /// other certificates beside them, another order or another encoding of
    /// what the signature does not cover cost no path validation and add no
    /// entry. A receipt carries a few certificates at most
    /// (`ReceiptShapeBounds.maxCertificates`).
    private func knownChain(signing signedData: PKCS7SignedData) -> ReceiptChain? {
        for certificate in signedData.certificates {
            if let chain = chains[Self.key(leaf: Array(certificate))], chain.signs(signedData) { return chain }
        }
        return nil
    }

    private static func key(leaf: [UInt8]) -> ChainKey {
        .certificates(leaf: leaf, intermediate: [])
    }

    /// Verified pairs known so far (for tests and metrics).
    public var cachedChainCount: Int {
        chains.count
    }

    /// Path validations done so far (for tests and metrics).
    public var pathValidationCount: Int {
        pathValidations.load(ordering: .relaxed)
    }

    /// Validates the chain of a leaf and intermediate (not cached: the caller
    /// does once the leaf's signature has checked).
    private func verifiedChain(leafDER: ArraySlice<UInt8>, intermediateDER: ArraySlice<UInt8>) throws(AppReceiptError) -> ReceiptChain {
        guard let leaf = try? Certificate(derEncoded: leafDER),
              let intermediate = try? Certificate(derEncoded: intermediateDER)
        else { throw AppReceiptError.missingCertificate }
        pathValidations.add(1, ordering: .relaxed)
        guard let path = validatedPath(leaf: leaf, intermediate: intermediate), path[1] == intermediate else {
            // Named by a marker a certificate lacks, whatever else may be wrong with the chain.
            guard leaf.extensions[oid: ReceiptMarkerPolicy.leafMarker] != nil,
                  intermediate.extensions[oid: ReceiptMarkerPolicy.intermediateMarker] != nil
            else { throw AppReceiptError.missingMarkerOID }
            throw AppReceiptError.untrustedChain
        }
        guard let leafKey = _RSA.Signing.PublicKey(leaf.publicKey) else { throw AppReceiptError.unsupportedSignature }
        let validity = path.dropFirst().reduce(path[0].validityMs) { $0?.overlap($1.validityMs) }
        return ReceiptChain(
            leafDER: Array(leafDER), intermediateDER: Array(intermediateDER), leafIssuer: leaf.issuer,
            leafSerialNumber: leaf.serialNumber,
            leafKeyIdentifier: (try? leaf.extensions.subjectKeyIdentifier).map { Array($0.keyIdentifier) },
            leafKey: leafKey, validity: validity)
    }

    /// The chain from `leaf` through `intermediate` to a trusted root, its
    /// signatures, basic and name constraints and Apple's markers checked, or
    /// nil. Validity in time is left out here and checked by the caller at the
    /// creation date, so that the result can be cached whatever the date.
    private func validatedPath(leaf: Certificate, intermediate: Certificate) -> [Certificate]? {
        let roots = self.roots
        return CallingThreadExecutor.run {
            var verifier = Verifier(rootCertificates: roots) {
                RFC5280Policy.withValidityCheckDisabled()
                ReceiptMarkerPolicy()
            }
            switch await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate])) {
            case .validCertificate(let chain): return Array(chain)
            case .couldNotValidate: return nil
            }
        }
    }
}

/// A receipt that passed every check.
public struct VerifiedAppReceipt: Equatable, Sendable {
    public let payload: AppReceiptPayload
    /// `Production`, or `Sandbox` for `ProductionSandbox`.
    public let environment: AppleEnvironment
    /// What verifyReceipt would have answered (status 0): what the delivery code reads.
    public let reply: AppleReply

    /// The reply's receipt (an app receipt: `format` `.appReceipt`).
    public var receipt: AppleReceipt {
        reply.receipt!  // appleReply(environment:) always writes one
    }
}
