/// docs/api.md "POST /v1/transactions/verify": a transaction id that neither
/// environment knows (`4040010` from both, or from production under the
/// sandbox policy `never`) is not asked about again for 60 s; the answer is
/// `pending` from memory. Apple can take a moment to show a new transaction,
/// so a client asks again, and a made-up id must not cost a Server API call
/// each time.
///
/// Bounded: at most `capacity` ids, the oldest forgotten first. The service
/// gives it its look-up budget as capacity, since only an id looked up can be
/// learned and a minute holds no more look-ups than that. Times are
/// milliseconds on the caller's monotonic clock, never going back.
public struct UnknownTransactionIDs: Sendable {
    public static let rememberMs: Int64 = 60_000

    public let capacity: Int
    /// Until when each id is remembered.
    private var expiries: [String: Int64] = [:]
    /// The ids in the order they were learned (an id learned again appears twice).
    private var learned = OldestFirstQueue<(id: String, expiresAtMs: Int64)>()

    public init(capacity: Int) {
        precondition(capacity > 0, "room for at least one id")
        self.capacity = capacity
    }

    /// The number of ids remembered now (after `forgetExpired`).
    public var count: Int { expiries.count }

    /// Whether Apple said less than a minute before `now` that it knows no such id.
    public mutating func isUnknown(_ id: String, atMs now: Int64) -> Bool {
        forgetExpired(atMs: now)
        return expiries[id] != nil
    }

    /// Apple said at `now` that it knows no such id.
    public mutating func learnUnknown(_ id: String, atMs now: Int64) {
        forgetExpired(atMs: now)
        let expiresAtMs = now + Self.rememberMs
        expiries[id] = expiresAtMs
        learned.append((id, expiresAtMs))
        while expiries.count > capacity {
            forgetOldest()
        }
    }

    private mutating func forgetExpired(atMs now: Int64) {
        while let oldest = learned.first, oldest.expiresAtMs <= now {
            forgetOldest()
        }
    }

    /// Drops the oldest entry, and its id unless it was learned again since.
    private mutating func forgetOldest() {
        let (id, expiresAtMs) = learned.removeFirst()
        if expiries[id] == expiresAtMs { expiries[id] = nil }
    }
}
