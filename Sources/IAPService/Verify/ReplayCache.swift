import IAPCore

/// Apple's answers to receipts already verified, by the SHA-256 of the
/// receipt's bytes, kept in memory for the replay short-cut: a client retrying
/// the same receipt costs one query for its transactions' states instead of
/// two and a JSON parse. An answer Apple gave for these exact bytes does not
/// change what transactions they hold, so entries never go stale; the states
/// themselves are always read from the database.
final class ReplayCache: Sendable {
    struct Entry: Sendable {
        let environment: AppleEnvironment
        let reply: AppleReply
    }

    /// Entries kept at most; the oldest goes first.
    static let capacity = 4096
    private let state = Locked((entries: [String: Entry](), order: [String]()))

    subscript(sha256: String) -> Entry? {
        state.withLock { $0.entries[sha256] }
    }

    func insert(_ entry: Entry, for sha256: String) {
        state.withLock { state in
            guard state.entries.updateValue(entry, forKey: sha256) == nil else { return }
            state.order.append(sha256)
            if state.order.count > Self.capacity {
                state.entries.removeValue(forKey: state.order.removeFirst())
            }
        }
    }
}
