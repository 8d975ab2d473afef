import Caches

/// Which `receipts` rows recently stored a receipt's bytes, by SHA-256, so that
/// a new row of the same bytes names that row (`receipts.bytes_in`) instead of
/// storing them again: apps retry the same receipt many times exactly while
/// Apple is slow or failing, and an iOS 7 receipt grows with every purchase.
///
/// One recorder thread owns an index, and remembers only rows it has seen
/// committed, so a pointer never names a row that is not there. Several
/// iap-fcgi instances (Galera) each have their own: a receipt's bytes are
/// then stored once per instance, never a pointer to another instance's row.
///
/// A row is pointed at only while it is younger than `windowMilliseconds`, less
/// than `iapctl prune`'s shortest retention (1 day): prune never clears the
/// bytes of a row a new pointer may still name, and keeps the bytes of a row
/// that a row within retention, or still open, points at.
public struct ReceiptBytesIndex {
    /// How old a row may be and still be named by a new row of the same bytes.
    public static let windowMilliseconds: Int64 = 12 * 3600 * 1000

    /// Where one new row's bytes go.
    public enum Placement: Equatable, Sendable {
        /// The row stores its bytes.
        case stored
        /// The bytes are in this earlier, committed row.
        case storedIn(receiptID: UInt64)
        /// The bytes are in the row of this earlier receipt of the same batch
        /// (its index), which stores them: written after it, in the same transaction.
        case storedWithReceipt(at: Int)

        /// Whether the row must be written after another row of its batch (`storedWithReceipt`).
        public var followsItsHolder: Bool {
            if case .storedWithReceipt = self { return true }
            return false
        }
    }

    /// A row that holds its bytes, and when it was received.
    private struct Holder {
        let receiptID: UInt64
        let receivedAtMs: Int64
    }

    private var holders: LRUCache<Digest, Holder>

    public init(capacity: Int) {
        holders = LRUCache(capacity: capacity)
    }

    public var count: Int { holders.count }

    /// Where each receipt of a batch (its SHA-256 in hex, and when its request
    /// arrived) puts its bytes: in a recent row of the same bytes, else in the
    /// batch's first receipt of those bytes, else in its own row. The first
    /// receipt of some bytes decides for the batch's others, so that equal
    /// receipts of a batch are written alike.
    public mutating func place(_ receipts: [(sha256Hex: String, receivedAtMs: Int64)]) -> [Placement] {
        var firstInBatch: [Digest: (index: Int, placement: Placement)] = [:]
        return receipts.enumerated().map { index, receipt in
            guard let digest = Digest(hex: receipt.sha256Hex) else { return .stored }
            if let first = firstInBatch[digest] {
                return first.placement == .stored ? .storedWithReceipt(at: first.index) : first.placement
            }
            var placement = Placement.stored
            if let holder = holders.value(for: digest),
               receipt.receivedAtMs - holder.receivedAtMs <= Self.windowMilliseconds {
                placement = .storedIn(receiptID: holder.receiptID)
            }
            firstInBatch[digest] = (index, placement)
            return placement
        }
    }

    /// A committed row that stores the bytes of `sha256Hex`.
    public mutating func remember(sha256Hex: String, receiptID: UInt64, receivedAtMs: Int64) {
        guard let digest = Digest(hex: sha256Hex) else { return }
        holders.insert(Holder(receiptID: receiptID, receivedAtMs: receivedAtMs), for: digest)
    }
}

/// A SHA-256 as four words: a fixed-size key, a quarter of the memory of its hex text.
private struct Digest: Hashable {
    let words: (UInt64, UInt64, UInt64, UInt64)

    /// Nil unless `hex` is 64 hex digits.
    init?(hex: String) {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var digits = 0
        for byte in hex.utf8 {
            guard digits < 64, let value = Self.value(ofHexDigit: byte).map(UInt64.init) else { return nil }
            switch digits / 16 {
            case 0: words.0 = words.0 << 4 | value
            case 1: words.1 = words.1 << 4 | value
            case 2: words.2 = words.2 << 4 | value
            default: words.3 = words.3 << 4 | value
            }
            digits += 1
        }
        guard digits == 64 else { return nil }
        self.words = words
    }

    private static func value(ofHexDigit byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    static func == (lhs: Digest, rhs: Digest) -> Bool {
        lhs.words == rhs.words
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
