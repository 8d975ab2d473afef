import IAPCore
import Synchronization

/// Apple's answers to receipts already verified, by the receipt's replay key
/// (`ReceiptData.replayKeyHex`), kept in memory for the replay short-cut: a client retrying
/// the same receipt costs one query for its transactions' states instead of
/// two and a JSON parse. The states themselves are always read from the
/// database, and a request naming a transaction an answer lacks goes to Apple
/// (`ReplayShortcut`).
///
/// Bounded by the bytes of Apple's answers (one receipt's answer can hold a
/// thousand transactions): the least recently used go first.
final class ReplayCache: Sendable {
    struct Entry: Sendable {
        /// The receipt row whose answer this is (a replay's audit row names it).
        let receiptID: UInt64
        /// That row's `sha256`: a replay with other bytes (another encoding of
        /// the same signed content) stores its own.
        let sha256: String
        let environment: AppleEnvironment
        let reply: AppleReply
    }

    /// The budget, counted in bytes of Apple's answers as JSON text: 4 MiB,
    /// about 3,300 answers of one transaction. Parsed, an answer takes 2 to 4
    /// times its text in memory (measured 2026-11-24, release build: 4.1 times
    /// for a 1.2 KB answer of one transaction, 1.9 for a 460 KB one of 1,000),
    /// so the cache stays under about 16 MiB.
    static let budgetBytes = 4 << 20
    private let entries = Mutex(ByteBudgetCache<String, Entry>(budgetBytes: ReplayCache.budgetBytes))

    subscript(replayKey: String) -> Entry? {
        entries.withLock { $0.value(for: replayKey) }
    }

    /// Keeps `entry`, whose answer was `answerBytes` bytes of JSON.
    func insert(_ entry: Entry, for replayKey: String, answerBytes: Int) {
        entries.withLock { $0.insert(entry, for: replayKey, bytes: answerBytes) }
    }
}
