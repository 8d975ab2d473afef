/// When a verification stops: past its deadline it calls Apple no more and
/// delivers nothing; it answers `retry_later` and its receipt row stays
/// unverified for the app's retry or `iapctl retry-pending`.
///
/// The deadline runs from when the request arrived. nginx gives up on a request
/// after `fastcgi_read_timeout` (120 s, nginx/iap-fcgi-locations.conf), so an
/// answer after that is computed for nobody; the deadline is at most 100 s,
/// which leaves 20 s for delivering and answering. Below that it is three times
/// `IAP_APPLE_TIMEOUT_MS` (the budget of one receipt's whole conversation with
/// Apple, `AppleRetryPolicy`: once for the conversation, twice for waiting a
/// turn in the queues before it) and 10 s for the database: 55 s at the default
/// 15 s, under the 60 s an iOS app waits by default
/// (`URLSessionConfiguration.timeoutIntervalForRequest`); 16 s at the tests' 2 s.
/// A call to Apple starts only with at least a second (or the whole timeout,
/// if shorter) left, and never runs past the deadline.
public enum VerificationDeadline {
    /// nginx's `fastcgi_read_timeout`, in milliseconds.
    public static let nginxReadTimeoutMs = 120_000
    /// The longest deadline: nginx's timeout less 20 s for delivering and answering.
    public static let longestMs = 100_000
    /// Allowed on top of Apple's calls for the queues, the database and delivery.
    public static let queuesAndDatabaseMs = 10_000
    /// `IAP_APPLE_TIMEOUT_MS` budgets in a deadline: the conversation with Apple, and two for the queues.
    public static let appleBudgets = 3

    /// The time a verification has from its request's arrival, in milliseconds.
    public static func budgetMs(appleTimeoutMs: Int) -> Int {
        min(longestMs, appleBudgets * appleTimeoutMs + queuesAndDatabaseMs)
    }

    /// The timeout of a call to Apple that would start with `remainingMs` left
    /// before the deadline; nil when too little is left for a call to be worth it.
    public static func callTimeoutMs(appleTimeoutMs: Int, remainingMs: Int) -> Int? {
        remainingMs >= shortestCallMs(appleTimeoutMs: appleTimeoutMs) ? min(appleTimeoutMs, remainingMs) : nil
    }

    /// The least time left for which a call to Apple starts: Apple usually
    /// answers well within a second, and a call cut shorter would mostly spend
    /// Apple's quota on an answer that comes too late.
    public static func shortestCallMs(appleTimeoutMs: Int) -> Int {
        min(appleTimeoutMs, 1000)
    }
}

/// A point on the monotonic clock after which a verification stops.
public struct Deadline: Equatable, Sendable {
    /// Monotonic nanoseconds; `UInt64.max` never comes.
    public let atNs: UInt64

    /// No deadline: `iapctl retry-pending`, which no client waits on.
    public static let never = Deadline(atNs: .max)

    public init(atNs: UInt64) {
        self.atNs = atNs
    }

    /// `budgetMs` after `startNs`.
    public init(startNs: UInt64, budgetMs: Int) {
        atNs = startNs + UInt64(max(budgetMs, 0)) * 1_000_000
    }

    public func isPast(nowNs: UInt64) -> Bool { nowNs >= atNs }

    /// Whole milliseconds left at `nowNs`, 0 once past; capped at `Int32.max`.
    public func remainingMs(nowNs: UInt64) -> Int {
        nowNs >= atNs ? 0 : Int(min((atNs - nowNs) / 1_000_000, UInt64(Int32.max)))
    }
}
