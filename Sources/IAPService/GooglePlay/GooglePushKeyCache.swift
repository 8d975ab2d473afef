import Curl
import IAPCore
import Synchronization

/// Google's keys for push tokens (`IAP_GOOGLE_PUSH_CERTS_URL`, a JWKS), fetched
/// over HTTPS with verification on (`IAP_CA_FILE`) and kept as
/// `GooglePushKeySchedule` says. The fetch is a blocking call made on the
/// accept thread that needs the keys (a thread of the service's own, never
/// Swift's cooperative pool), one at a time: a thread that finds another
/// fetching waits for it and uses what it got.
final class GooglePushKeyCache: Sendable {
    private let url: String
    private let caFile: String?
    private let schedule = Mutex(GooglePushKeySchedule())
    /// Held for the whole of a fetch, so that threads needing keys at once make one call.
    private let fetching = Mutex(())

    static let connectTimeoutMs = 5_000
    static let totalTimeoutMs = 10_000
    /// A JWKS is a few KiB.
    static let responseLimit = 256 << 10

    init(url: String, caFile: String?) {
        self.url = url
        self.caFile = caFile
    }

    /// The keys to check a token signed with `kid`: fetched first when none are
    /// held, when they are past their `max-age`, or when `kid` is not among them
    /// (at most once a minute). Nil when no keys could ever be fetched.
    func keys(for kid: String) -> GooglePushKeys? {
        let now = Self.nowMs()
        if let held = schedule.withLock({ $0.needsFetch(for: kid, nowMs: now) ? nil : $0.keys }) { return held }
        return fetching.withLock { _ in
            // Another thread may have fetched while this one waited.
            let now = Self.nowMs()
            guard schedule.withLock({ $0.needsFetch(for: kid, nowMs: now) }) else {
                return schedule.withLock { $0.keys }
            }
            let fetched = fetch()
            return schedule.withLock { schedule in
                if let (keys, cacheControl) = fetched {
                    schedule.fetched(keys, cacheControl: cacheControl, nowMs: Self.nowMs())
                } else {
                    schedule.fetchFailed(nowMs: Self.nowMs())
                }
                return schedule.keys
            }
        }
    }

    /// One GET of the JWKS; nil (and a log line) when it brings no usable keys.
    private func fetch() -> (GooglePushKeys, String?)? {
        do {
            let transfer = try CurlTransfer()
            transfer.responseLimit = Self.responseLimit
            try transfer.prepareGET(
                url: url, extraHeaders: [], caFile: caFile, connectTimeoutMs: Self.connectTimeoutMs,
                totalTimeoutMs: Self.totalTimeoutMs)
            let multi = try CurlMulti(maxConnections: 1)
            try multi.add(transfer)
            var outcome: CurlTransfer.Outcome?
            while outcome == nil {
                outcome = try multi.perform().first?.1
                if outcome == nil { try multi.wait(timeoutMs: 250) }
            }
            guard case .answered(200) = outcome else {
                Log.event("notifications/google: Google's keys not fetched from \(url): \(outcome.map { "\($0)" } ?? "")")
                return nil
            }
            let keys = try GooglePushKeys.parse(transfer.responseBody)
            return (keys, transfer.responseHeader("Cache-Control"))
        } catch {
            Log.event("notifications/google: Google's keys not fetched from \(url): \(error)")
            return nil
        }
    }

    private static func nowMs() -> Int64 {
        Int64(SystemClock.monotonicNanoseconds() / 1_000_000)
    }
}
