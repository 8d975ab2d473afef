/// API.md "POST /v1/transactions/verify": at most
/// `IAP_APPSTORE_LOOKUPS_PER_MINUTE` transaction ids are looked up at Apple
/// per minute by the whole service; beyond that a bare `transaction_id` is
/// `retry_later`. Without it anyone could spend the shop's Server API quota
/// (Apple rate-limits per app) by posting made-up ids.
///
/// A sliding window, exact: the times of the last `perMinute` look-ups in a
/// ring, and a new one is allowed only when the oldest of them is a minute
/// old. The ring grows with use up to `perMinute` entries (8 bytes each).
/// Times are milliseconds on the caller's monotonic clock.
public struct TransactionLookupBudget: Sendable {
    public static let windowMs: Int64 = 60_000

    public let perMinute: Int
    private var times: [Int64] = []
    /// Once the ring is full: the position of the oldest time, the next overwritten.
    private var oldest = 0

    public init(perMinute: Int) {
        precondition(perMinute > 0, "a budget of at least one look-up a minute")
        self.perMinute = perMinute
    }

    /// Takes one look-up at `now` when the last minute leaves room for it.
    public mutating func take(atMs now: Int64) -> Bool {
        if times.count < perMinute {
            times.append(now)
            return true
        }
        guard now - times[oldest] >= Self.windowMs else { return false }
        times[oldest] = now
        oldest = (oldest + 1) % perMinute
        return true
    }
}
