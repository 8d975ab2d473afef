import Caches
import Crypto
import Glibc
import IAPCore
import Synchronization

/// A leaf and intermediate already found to chain to a trusted root with
/// Apple's marker OIDs: what a verification needs of them afterwards.
struct VerifiedChain: Sendable {
    /// The leaf's key, which signs the JWS.
    let leafKey: P256.Signing.PublicKey
    /// When all three certificates of the chain (leaf, intermediate, root) are
    /// valid, in ms since 1970, both ends included.
    let validity: ClosedRange<Int64>
    /// The leaf's subject and expiry, for `latestLeafLifetime`.
    let leafLifetime: CertificateLifetime
}

/// Verified chains by a byte key: the DER of their leaf and intermediate
/// (`ChainKey.certificates`), or the header of a JWS that verified with them
/// (`ChainKey.header`). By the certificates, a JWS signed by a known leaf costs
/// its header's decoding and one ECDSA check instead of a path validation (DER
/// parses and two ECDSA checks), however its header is written (spacing,
/// member order, another `x5c` root, which plays no part). By the header as
/// sent, a client's usual JWS skips even the header's decoding (its base64,
/// JSON and three certificates' base64): a cached verification in
/// `signed-data-bench` took 71.5 µs of CPU with it and 83.3 µs without
/// (medians of 5 runs each, in turn, 2026-11-28).
///
/// Only a chain that validated and whose leaf's signature on a JWS checked is
/// put in (`SignedDataVerifier` inserts after the signature), so an entry
/// costs its sender a JWS signed by a trusted leaf: a forged JWS, whatever its
/// `x5c`, costs at most one path validation and evicts nothing. What is cached
/// is the path alone, which does not depend on time: validity at the JWS's
/// `signedDate` is checked on every call against the chain's `validity`, so a
/// cached pair answers exactly as a fresh validation would. (Only if several
/// configured roots could anchor the same pair, with different validity, could
/// a fresh search find another one: the roots are the operator's few, and a
/// JWS outside the cached window is validated afresh anyway.)
///
/// Thread-safe; bounded, the chain used least recently going first. Apple signs
/// with a few leaves at a time (production, sandbox), renewed every year or so.
/// Generic over what a verification keeps of a chain: app receipts
/// (`AppReceiptVerifier`) cache theirs, an RSA leaf's, the same way.
package final class VerifiedChainCache<Chain: Sendable>: Sendable {
    private let chains: Mutex<LRUCache<ChainKey, Chain>>

    package init(capacity: Int) {
        self.chains = Mutex(LRUCache(capacity: max(1, capacity)))
    }

    package subscript(key: ChainKey) -> Chain? {
        chains.withLock { $0.value(for: key) }
    }

    package func insert(_ chain: Chain, for key: ChainKey) {
        chains.withLock { _ = $0.insert(chain, for: key) }
    }

    package var count: Int {
        chains.withLock { $0.count }
    }
}

/// Bytes naming a verified chain, as a cache key hashed and compared as raw
/// memory.
///
/// `[UInt8]` keys hash and compare element by element through generic code
/// when the cache (`LRUCache`, another module) is not specialised for them:
/// with 3 KB keys that was a third of iap-fcgi's CPU in the bench's case s2
/// (perf, 2026-11-24), and it was paid under the cache's lock. The key is
/// hashed once, outside the lock. Where the bytes are two certificates, the
/// leaf's length is part of the key, so two pairs whose bytes run together
/// alike are still two keys.
package struct ChainKey: Hashable, Sendable {
    private let bytes: [UInt8]
    private let split: Int
    private let digest: Int

    private init(bytes: [UInt8], split: Int) {
        self.bytes = bytes
        self.split = split
        var hasher = Hasher()
        hasher.combine(split)
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        digest = hasher.finalize()
    }

    /// A leaf's and an intermediate's DER.
    package static func certificates(leaf: [UInt8], intermediate: [UInt8]) -> ChainKey {
        ChainKey(bytes: leaf + intermediate, split: leaf.count)
    }

    /// A JWS's header, base64url as sent.
    static func header(_ encodedHeader: ArraySlice<UInt8>) -> ChainKey {
        ChainKey(bytes: Array(encodedHeader), split: -1)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(digest)
    }

    package static func == (left: ChainKey, right: ChainKey) -> Bool {
        guard left.digest == right.digest, left.split == right.split, left.bytes.count == right.bytes.count
        else { return false }
        guard !left.bytes.isEmpty else { return true }
        return left.bytes.withUnsafeBytes { leftBytes in
            right.bytes.withUnsafeBytes { rightBytes in
                memcmp(leftBytes.baseAddress!, rightBytes.baseAddress!, leftBytes.count) == 0
            }
        }
    }
}
