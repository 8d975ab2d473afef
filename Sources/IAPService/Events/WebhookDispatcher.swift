import Curl
import Glibc
import IAPCore

/// Pushes the `events` rows to the game's endpoint (`IAP_WEBHOOK_URL`), on a
/// thread of its own with its own database connection: never on a request's
/// path. The thread drives its own libcurl multi handle, so up to
/// `maxInFlight` POSTs (each a different user's event) wait on the network at
/// once without a thread each.
///
/// One round: lease the due events (`WebhookStore.lease`, a lease per row),
/// start a POST for each, wait on the network, record each answer (2xx:
/// `sent`; else a retry after `WebhookRetryPolicy`'s backoff, or `failed` after
/// 72 hours). While POSTs complete, it claims again at once; when nothing is
/// due, every 200 ms (`WebhookPolling`).
final class WebhookDispatcher: Worker, @unchecked Sendable {
    /// POSTs under way at once; each is a different user's event.
    static let maxInFlight = 64
    /// Answers recorded, and events claimed, together at most: a quarter of the slots.
    static let batch = 16
    /// After a database error, the next claim waits this long.
    static let databaseRetryMs: Int64 = 1000
    static let connectTimeoutMs = 5000
    /// One POST's limit, connecting included.
    static let postTimeoutMs = 10_000
    /// A claimed event is no other dispatcher's for this long. It covers the
    /// POST's timeout with room for the database calls around it: a lease
    /// must never end while its POST may still be under way.
    static let leaseMs: Int64 = 30_000

    private let configuration: WebhookConfiguration
    private let caFile: String?
    private let database: Database
    private let multi: CurlMulti
    // The rest belongs to the dispatcher's thread.
    private var idleTransfers: [CurlTransfer] = []
    /// Failing POSTs in a row: the first of a run and the recovery are logged, not each.
    private var failuresInARow = 0
    private var databaseLog = DatabaseFailureLog(worker: "webhook", retry: .milliseconds(WebhookDispatcher.databaseRetryMs))

    init(configuration: WebhookConfiguration, caFile: String?, database: Database) throws {
        self.configuration = configuration
        self.caFile = caFile
        self.database = database
        multi = try CurlMulti(maxConnections: Self.maxInFlight)
    }

    var threadName: String { "webhook" }

    /// Ends the dispatcher's wait on the network.
    func wake() {
        multi.wakeUp()
    }

    /// Once stopped, claims nothing more, lets the POSTs under way finish (at most
    /// `postTimeoutMs`) and records them, then returns.
    func run(_ stop: StopRequest) {
        Log.event("webhook: pushing events, \(Self.maxInFlight) POSTs at most at once")
        let store = WebhookStore(connection: database.connection())
        var nextClaimMs: Int64 = 0
        var finished: [(CurlTransfer, CurlTransfer.Outcome)] = []
        while true {
            let isStopping = stop.isRequested
            let free = Self.maxInFlight - multi.count
            // Answers are recorded, and slots filled, `batch` at a time while POSTs
            // are many (one commit for both), at once while few.
            let recording = !finished.isEmpty && (free >= Self.batch || isStopping)
            let claiming = !isStopping && free >= Self.batch && SystemClock.wallMilliseconds() >= nextClaimMs
            if recording || claiming {
                nextClaimMs = round(recording: recording ? finished : [], claimingUpTo: claiming ? free : 0, store)
                if recording { finished.removeAll() }
            }
            if isStopping && multi.count == 0 && finished.isEmpty { return }
            do {
                finished += try multi.perform()
                if finished.isEmpty || Self.maxInFlight - multi.count < Self.batch {
                    try multi.wait(timeoutMs: waitMs(until: nextClaimMs))
                }
            } catch {
                Log.event("webhook: \(error)")
            }
        }
    }

    /// One database transaction: the answers of `finished` POSTs recorded, then
    /// up to `limit` due events claimed (a user whose event was just sent may have
    /// the next one due), and their POSTs started. One that lost to another
    /// transaction (on Galera, a certification conflict: 1213) runs again whole;
    /// when it keeps failing, each answer is recorded on its own, so that a
    /// 2xx is not POSTed again, nor a failure's backoff forgotten, for the sake
    /// of one conflicting row. Returns when to claim next (UTC ms).
    private func round(
        recording finished: [(CurlTransfer, CurlTransfer.Outcome)], claimingUpTo limit: Int, _ store: WebhookStore
    ) -> Int64 {
        let now = Timestamp.now()
        let lease = AppleDate.sqlDateTime(ms: now.milliseconds + Self.leaseMs)
        let results = answers(of: finished)
        let claimed: [WebhookStore.Claimed]
        let startedNs = SystemClock.monotonicNanoseconds()
        do {
            let (recorded, leased) = try store.transaction {
                (try record(results, at: now, store), limit > 0 ? try store.lease(upTo: limit, now: now, until: lease) : [])
            }
            recorded.log()
            claimed = try store.claimed(leased, lease: lease)
            databaseLog.note(nil)
        } catch {
            // Leased events, and answers not recorded even alone, wait for their leases to
            // end; then they are sent again, with the same event_id.
            databaseLog.note(error)
            if !results.isEmpty { recordEachAlone(results, at: now, store) }
            return now.milliseconds + Self.databaseRetryMs
        }
        claimed.forEach(post)
        // Busy (as many as it could take): again as soon as slots free.
        if limit == 0 || claimed.count == limit { return now.milliseconds }
        let lookMs = Int64((SystemClock.monotonicNanoseconds() - startedNs) / 1_000_000)
        return now.milliseconds + WebhookPolling.idleWaitMs(afterLookOf: lookMs)
    }

    /// Each answer in a database transaction of its own (retried as a round is):
    /// those the database takes are kept, whatever becomes of the others.
    private func recordEachAlone(_ results: [Answer], at now: Timestamp, _ store: WebhookStore) {
        var unrecorded = 0
        for result in results {
            do {
                try store.transaction { try record([result], at: now, store) }.log()
            } catch {
                unrecorded += 1
            }
        }
        Log.event("webhook: \(results.count - unrecorded) of \(results.count) answers recorded one by one")
    }

    private func post(_ claimed: WebhookStore.Claimed) {
        let body = claimed.event.body()
        let headers = claimed.event.headers(
            body: body, secret: configuration.secret, unixSeconds: SystemClock.wallMilliseconds() / 1000)
        do {
            let transfer = try idleTransfers.popLast() ?? CurlTransfer()
            try transfer.prepare(
                url: configuration.url, body: body, caFile: caFile, connectTimeoutMs: Self.connectTimeoutMs,
                totalTimeoutMs: Self.postTimeoutMs, extraHeaders: headers)
            transfer.responseLimit = 64 << 10
            transfer.context = PostUnderWay(claimed)
            try multi.add(transfer)
        } catch {
            // Left leased: claimed again when the lease ends.
            Log.event("webhook: event \(claimed.event.eventID) could not be sent: \(error)")
        }
    }

    /// The events of finished POSTs, each with its `last_error` (nil: a 2xx); their transfers go back to the pool.
    private func answers(of finished: [(CurlTransfer, CurlTransfer.Outcome)]) -> [Answer] {
        var results: [Answer] = []
        for (transfer, outcome) in finished {
            guard let underWay = transfer.context as? PostUnderWay else { continue }
            transfer.context = nil
            let error = Self.error(of: outcome)
            let event = underWay.claimed.event
            let reply = RefundRequestReply(eventType: event.type, delivered: error == nil, body: transfer.responseBody)
            if let unheard = reply.unheard {
                Log.event("webhook: event \(event.eventID) (refund_requested): \(unheard)")
            }
            idleTransfers.append(transfer)
            results.append((underWay.claimed, error, reply.consumedMilli))
            ServiceMetrics.webhookAttempt(outcome: Self.metricOutcome(of: outcome))
        }
        noteAnswers(results.map(\.error))
        return results
    }

    /// Records answers (inside a database transaction, which may run again): sent,
    /// with what the game answered to a refund request, or retried later, or failed. What it found is logged once the transaction commits.
    private func record(_ results: [Answer], at now: Timestamp, _ store: WebhookStore) throws -> Recorded {
        var recorded = Recorded()
        for (lease, claimed) in Dictionary(grouping: results.filter { $0.error == nil }.map(\.0), by: \.lease) {
            recorded.lost += try store.recordSent(claimed, lease: lease, at: now)
        }
        let requests = RefundRequestStore(connection: store.connection)
        for case let (claimed, .none, milli?) in results where !recorded.lost.contains(claimed.event.eventID) {
            try requests.recordGameConsumption(
                eventID: claimed.event.eventID, transactionID: claimed.event.transaction.transactionID, milli: milli)
        }
        for case let (claimed, error?, _) in results {
            let decision = WebhookRetryPolicy.afterFailure(
                failedAttempts: claimed.attempts + 1, windowStartMs: claimed.retryWindowStartMs,
                nowMs: now.milliseconds)
            if try !store.recordFailure(claimed, error: error, decision: decision) {
                recorded.lost.append(claimed.event.eventID)
            } else if decision == .giveUp {
                recorded.gaveUp.append((claimed.event.eventID, error))
            }
        }
        return recorded
    }

    /// What recording answers found worth a log line.
    private struct Recorded {
        /// Events whose lease ended before their result was recorded.
        var lost: [UInt64] = []
        /// Events `failed` now, with their last error.
        var gaveUp: [(eventID: UInt64, error: String)] = []

        func log() {
            for (eventID, error) in gaveUp {
                Log.event("webhook: event \(eventID) failed: no 2xx in 72 hours (\(error))")
            }
            for eventID in lost {
                Log.event("webhook: event \(eventID): its lease ended before its result was recorded")
            }
        }
    }

    /// `iap_webhook_attempts_total`'s `outcome`: `delivered`, `http_4xx`, `http_5xx`, `http_other`,
    /// `timeout`, `tls` or `connection`.
    private static func metricOutcome(of outcome: CurlTransfer.Outcome) -> String {
        switch outcome {
        case .answered(let status) where (200...299).contains(status): return "delivered"
        case .answered(let status) where (400...599).contains(status): return "http_\(status / 100)xx"
        case .answered: return "http_other"
        case .timedOut: return "timeout"
        case .tlsFailed: return "tls"
        case .connectionFailed: return "connection"
        }
    }

    /// What `last_error` says about a POST; nil for a 2xx.
    private static func error(of outcome: CurlTransfer.Outcome) -> String? {
        switch outcome {
        case .answered(let status) where (200...299).contains(status): return nil
        case .answered(let status): return "HTTP \(status)"
        case .timedOut: return "no answer within \(postTimeoutMs / 1000) s"
        case .tlsFailed: return "TLS failed (certificate not trusted, or handshake refused)"
        case .connectionFailed(let code): return "connection failed (curl error \(code))"
        }
    }

    private func noteAnswers(_ errors: [String?]) {
        for error in errors {
            if let error {
                failuresInARow += 1
                if failuresInARow == 1 { Log.event("webhook: POST failed (\(error)); retrying with backoff") }
            } else {
                if failuresInARow > 0 { Log.event("webhook: POSTs succeed again after \(failuresInARow) failures") }
                failuresInARow = 0
            }
        }
    }

    /// How long to wait on the network before the next claim is due; at most a
    /// second (a stop request wakes the wait).
    private func waitMs(until nextClaimMs: Int64) -> Int32 {
        guard Self.maxInFlight - multi.count >= Self.batch else { return 1000 }
        return Int32(clamping: min(max(nextClaimMs - SystemClock.wallMilliseconds(), 0), 1000))
    }

    /// A finished POST's event, its `last_error` (nil: a 2xx) and, for a
    /// `refund_requested` one, the consumption the game answered (milliunits).
    private typealias Answer = (WebhookStore.Claimed, error: String?, consumedMilli: Int?)

    /// A POST's event, found again when its transfer completes.
    private final class PostUnderWay {
        let claimed: WebhookStore.Claimed

        init(_ claimed: WebhookStore.Claimed) {
            self.claimed = claimed
        }
    }
}
