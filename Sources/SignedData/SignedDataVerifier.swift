import Crypto
import Foundation
import IAPCore
import Synchronization
@_spi(DisableValidityCheck) import X509

/// Verifies JWS signed by Apple (StoreKit 2 transactions, server notifications)
/// with no network call, as docs/api.md says (step 2 of "POST
/// /v1/transactions/verify"): three parts, `alg` ES256, `x5c` of three
/// certificates whose leaf and intermediate chain to a trusted root and carry
/// Apple's marker OIDs, every certificate of the chain valid at the payload's
/// `signedDate`, and the ES256 signature by the leaf's key over
/// `header.payload`. The `x5c` root is not used: the chain must end at one of
/// `roots`.
///
/// Pure CPU work, safe to call from several threads at once; path validations
/// are cached (`VerifiedChainCache`) by the leaf's and intermediate's DER once
/// a JWS they name has verified, signature included, and by that JWS's header
/// as sent: a JWS from a known leaf costs one ECDSA verification (and its
/// header's decoding when written otherwise), and a refused one leaves nothing
/// behind.
public final class SignedDataVerifier: Sendable {
    private let roots: CertificateStore
    private let chains: VerifiedChainCache<VerifiedChain>
    private let chainsByHeader: VerifiedChainCache<VerifiedChain>
    private let latestLeaf = Mutex<CertificateLifetime?>(nil)
    private let pathValidations = Atomic<Int>(0)

    /// - Parameter cacheCapacity: verified (leaf, intermediate) pairs kept, and
    ///   as many headers that named one.
    public init(roots: TrustedRoots = .apple, cacheCapacity: Int = 64) {
        self.roots = CertificateStore(roots.certificates)
        self.chains = VerifiedChainCache(capacity: cacheCapacity)
        self.chainsByHeader = VerifiedChainCache(capacity: cacheCapacity)
    }

    /// The verified payload, as Apple wrote it and parsed.
    public func verify(_ jws: [UInt8]) throws(SignedDataError) -> (payload: [UInt8], json: JSONObject) {
        let parts = try CompactJWS(jws)
        guard let json = (try? JSONParser.parse(parts.payload))?.objectValue else {
            throw SignedDataError.invalidPayload
        }
        let signedDate = try PayloadFields(json).requiredInteger("signedDate")
        // The same header bytes as a JWS that verified: the same `alg` and certificates.
        let headerKey = ChainKey.header(parts.encodedHeader)
        if let chain = chainsByHeader[headerKey] {
            try check(parts, signedDate: signedDate, against: chain)
            return (parts.payload, json)
        }
        let chainDER = try parts.certificateChainDER()
        let key = ChainKey.certificates(leaf: chainDER[0], intermediate: chainDER[1])
        let known = chains[key]
        let chain: VerifiedChain
        if let known {
            chain = known
        } else {
            chain = try verifiedChain(leafDER: chainDER[0], intermediateDER: chainDER[1])
        }
        try check(parts, signedDate: signedDate, against: chain)
        // Only now: the leaf's key signed this JWS, so the chain is one a trusted leaf signs with.
        if known == nil {
            chains.insert(chain, for: key)
            latestLeaf.withLock { $0 = chain.leafLifetime }
        }
        chainsByHeader.insert(chain, for: headerKey)
        return (parts.payload, json)
    }

    /// Every certificate of `chain` valid at `signedDate`, and the leaf's signature on the JWS.
    private func check(_ parts: CompactJWS, signedDate: Int64, against chain: VerifiedChain) throws(SignedDataError) {
        guard chain.validity.contains(signedDate) else { throw SignedDataError.expiredAtSignedDate }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: parts.signature),
              chain.leafKey.isValidSignature(signature, for: parts.signingInput)
        else { throw SignedDataError.badSignature }
    }

    /// A StoreKit 2 transaction, verified and decoded.
    public func verifyTransaction(_ jws: [UInt8]) throws(SignedDataError) -> SignedTransaction {
        let (payload, json) = try verify(jws)
        return try SignedTransaction(payload: payload, json: json)
    }

    /// The leaf of the chain cached last (a new pair that signed a JWS, not one
    /// from the cache): Apple's current signing certificate, for its expiry.
    /// Nil until one is.
    public var latestLeafLifetime: CertificateLifetime? {
        latestLeaf.withLock { $0 }
    }

    /// Verified pairs known so far (for tests and metrics).
    public var cachedChainCount: Int {
        chains.count
    }

    /// Path validations done so far: the JWS whose (leaf, intermediate) pair
    /// was not cached and parsed as certificates (for tests and metrics).
    public var pathValidationCount: Int {
        pathValidations.load(ordering: .relaxed)
    }

    /// Validates the chain of a leaf and intermediate (not cached: the caller
    /// does once the leaf's signature has checked).
    private func verifiedChain(leafDER: [UInt8], intermediateDER: [UInt8]) throws(SignedDataError) -> VerifiedChain {
        guard let leaf = try? Certificate(derEncoded: leafDER),
              let intermediate = try? Certificate(derEncoded: intermediateDER)
        else { throw SignedDataError.malformed }
        pathValidations.add(1, ordering: .relaxed)
        let path = validatedPath(leaf: leaf, intermediate: intermediate)
        // leaf, the intermediate given, a root: a leaf issued by a root itself has no intermediate to check.
        guard let path, path.count == 3, path[1] == intermediate else { throw SignedDataError.untrustedChain }
        guard path[1].extensions[oid: AppleMarkerOID.intermediate] != nil,
              path[0].extensions[oid: AppleMarkerOID.leaf] != nil
        else { throw SignedDataError.missingMarkerOID }
        guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else { throw SignedDataError.unsupportedLeafKey }
        let from = path.map { milliseconds($0.notValidBefore) }.max()!
        let until = path.map { milliseconds($0.notValidAfter) }.min()!
        guard from <= until else { throw SignedDataError.expiredAtSignedDate }  // never all valid at once
        return VerifiedChain(leafKey: leafKey, validity: from...until, leafLifetime: CertificateLifetime(leaf))
    }

    /// The chain from `leaf` through `intermediate` to a trusted root, its
    /// signatures, basic and name constraints checked (RFC 5280), or nil.
    /// Validity in time is left out here and checked by the caller at
    /// `signedDate`, so that the result can be cached whatever the date.
    private func validatedPath(leaf: Certificate, intermediate: Certificate) -> [Certificate]? {
        let roots = self.roots
        return CallingThreadExecutor.run {
            var verifier = Verifier(rootCertificates: roots) { RFC5280Policy.withValidityCheckDisabled() }
            switch await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate])) {
            case .validCertificate(let chain): return Array(chain)
            case .couldNotValidate: return nil
            }
        }
    }

    private func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}
