/// When Google's push keys (its JWKS) are fetched: once at first need, again
/// when the `Cache-Control: max-age` of the last answer has passed, and for a
/// `kid` the keys do not have at most once a minute (a token naming a made-up
/// `kid` must not make the service fetch at every request). Times are
/// milliseconds on the caller's monotonic clock.
public struct GooglePushKeySchedule: Sendable {
    /// The least time between two fetches made for an unknown `kid`.
    public static let unknownKeyIntervalMs: Int64 = 60_000
    /// How long keys are kept when the answer gives no usable `max-age`.
    public static let defaultMaxAgeMs: Int64 = 3_600_000

    public private(set) var keys: GooglePushKeys?
    private var expiresAtMs: Int64 = .min
    private var lastFetchMs: Int64?

    public init() {}

    /// Whether to fetch before checking a token signed with `kid`.
    public func needsFetch(for kid: String, nowMs: Int64) -> Bool {
        guard let keys, nowMs < expiresAtMs else { return mayFetchAgain(nowMs) }
        return keys.keys[kid] == nil && mayFetchAgain(nowMs)
    }

    /// Keys fetched at `nowMs`, kept for the answer's `Cache-Control` `max-age`.
    public mutating func fetched(_ keys: GooglePushKeys, cacheControl: String?, nowMs: Int64) {
        self.keys = keys
        expiresAtMs = nowMs + (cacheControl.flatMap(Self.maxAgeMs) ?? Self.defaultMaxAgeMs)
        lastFetchMs = nowMs
    }

    /// A fetch that failed: the keys held stay (expired or not, they are still Google's), and the next try waits its minute.
    public mutating func fetchFailed(nowMs: Int64) {
        lastFetchMs = nowMs
    }

    private func mayFetchAgain(_ nowMs: Int64) -> Bool {
        guard let lastFetchMs else { return true }
        return nowMs - lastFetchMs >= Self.unknownKeyIntervalMs
    }

    /// `max-age` of a `Cache-Control` value in milliseconds (`public, max-age=19842, must-revalidate`); nil when
    /// absent, not a number, or `no-store`/`no-cache` (then keys are still kept a while: a fetch per push would be worse).
    public static func maxAgeMs(_ cacheControl: String) -> Int64? {
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces.lowercased() }
            guard parts.count == 2, parts[0] == "max-age" else { continue }
            let digits = parts[1].hasPrefix("\"") && parts[1].hasSuffix("\"") && parts[1].count >= 2
                ? String(parts[1].dropFirst().dropLast()) : parts[1]
            guard let seconds = Int64(digits), seconds >= 0, seconds <= 30 * 86_400 else { return nil }
            return seconds * 1000
        }
        return nil
    }
}
