/// docs/api.md "POST /v1/transactions/verify": at most
/// `IAP_APPSTORE_LOOKUPS_PER_MINUTE` Get Transaction Info look-ups per minute
/// by the whole service, for a bare `transaction_id` and for the entries of a
/// receipt confirmed under `server-api` alike; beyond that the answer is
/// `retry_later`. Without it anyone could spend the shop's Server API quota
/// (Apple rate-limits per app) by posting made-up ids or receipts.
///
/// A sliding window, exact: the times of the last `perMinute` look-ups in a
/// ring, and new ones are allowed only when as many of them are a minute
/// old. The ring grows with use up to `perMinute` entries (8 bytes each).
/// Times are milliseconds on the caller's monotonic clock.
public struct TransactionLookupBudget: Sendable {
    public static let windowMs: Int64 = 60_000

    public let perMinute: Int
    /// In time order from `oldest`.
    private var times: [Int64] = []
    /// Once the ring is full: the position of the oldest time, the next overwritten.
    private var oldest = 0

    public init(perMinute: Int) {
        precondition(perMinute > 0, "a budget of at least one look-up a minute")
        self.perMinute = perMinute
    }

    /// Takes `count` look-ups at `now`, all or none: only when the last minute
    /// leaves room for every one of them.
    public mutating func take(_ count: Int = 1, atMs now: Int64) -> Bool {
        precondition(count > 0, "at least one look-up")
        guard count <= perMinute else { return false }
        let overwritten = count - (perMinute - times.count)
        if overwritten > 0, now - times[(oldest + overwritten - 1) % perMinute] < Self.windowMs {
            return false
        }
        for _ in 0..<count {
            record(atMs: now)
        }
        return true
    }

    private mutating func record(atMs now: Int64) {
        guard times.count == perMinute else {
            times.append(now)
            return
        }
        times[oldest] = now
        oldest = (oldest + 1) % perMinute
    }
}
