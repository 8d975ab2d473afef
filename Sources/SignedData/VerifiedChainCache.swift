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
}

/// Verified chains by the JWS header that names them (base64url, as sent:
/// `alg` ES256 and the `x5c` certificates), so that a JWS signed by a known
/// leaf costs one ECDSA check instead of decoding its header and certificates
/// and validating the path (three DER parses and two ECDSA checks). A header
/// written differently for the same chain is one more entry, validated once.
///
/// What is cached is the path alone, which does not depend on time: the
/// chain's signatures, constraints and OIDs. Validity at the JWS's
/// `signedDate` is checked on every call against the chain's `validity`, so a
/// cached pair answers exactly as a fresh validation would. (Only if several
/// configured roots could anchor the same pair, with different validity, could
/// a fresh search find another one: the roots are the operator's few, and a
/// JWS outside the cached window is validated afresh anyway.) Refusals are not
/// cached: a forged chain costs its sender a path validation each time.
///
/// Thread-safe; bounded, the chain used least recently going first. Apple signs with a few
/// leaves at a time (production, sandbox), renewed every year or so.
final class VerifiedChainCache: Sendable {
    private let chains: Mutex<LRUCache<HeaderKey, VerifiedChain>>

    init(capacity: Int) {
        self.chains = Mutex(LRUCache(capacity: max(1, capacity)))
    }

    subscript(header: ArraySlice<UInt8>) -> VerifiedChain? {
        let key = HeaderKey(header)
        return chains.withLock { $0.value(for: key) }
    }

    func insert(_ chain: VerifiedChain, for header: ArraySlice<UInt8>) {
        let key = HeaderKey(header)
        chains.withLock { _ = $0.insert(chain, for: key) }
    }

    var count: Int {
        chains.withLock { $0.count }
    }
}

/// A JWS header's bytes as a cache key, hashed and compared as raw memory.
///
/// `[UInt8]` and `ArraySlice<UInt8>` keys hash and compare element by element
/// through generic code when the cache (`LRUCache`, another module) is not
/// specialised for them: with a 3 KB header that was a third of iap-fcgi's
/// CPU in the bench's case s2 (perf, 2026-11-24), and it was paid under the
/// cache's lock. The key is hashed once, outside the lock; a lookup copies the
/// header once (a memcpy of 3 KB).
struct HeaderKey: Hashable, Sendable {
    private let bytes: [UInt8]
    private let digest: Int

    init(_ header: ArraySlice<UInt8>) {
        bytes = Array(header)
        var hasher = Hasher()
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        digest = hasher.finalize()
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(digest)
    }

    static func == (left: HeaderKey, right: HeaderKey) -> Bool {
        guard left.digest == right.digest, left.bytes.count == right.bytes.count else { return false }
        guard !left.bytes.isEmpty else { return true }
        return left.bytes.withUnsafeBytes { leftBytes in
            right.bytes.withUnsafeBytes { rightBytes in
                memcmp(leftBytes.baseAddress!, rightBytes.baseAddress!, leftBytes.count) == 0
            }
        }
    }
}
