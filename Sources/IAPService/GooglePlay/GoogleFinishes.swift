import Dispatch
import Glibc
import IAPCore

/// Consumes or acknowledges at Google what was delivered (the `google_finishes` outbox), well
/// within Google's 3 days after which a purchase not acknowledged is refunded: it leases due rows
/// (`GoogleFinishStore`, one call per row across instances), calls Google through
/// `GooglePlayClient`, and records each result; a failure is tried again with backoff
/// (`GoogleFinishRetry`). On a thread of its own with its own database connection; woken by the
/// verifier after each delivery, else it looks every `idlePollMs`.
final class GoogleFinisher: @unchecked Sendable {
    static let batch = 4
    static let idlePollMs = 250
    static let databaseRetryMs = 1000
    static let backlogIntervalMs: Int64 = 5000

    private let client: GooglePlayClient
    private let database: Database
    private let stopping = Locked(false)
    private let wake = DispatchSemaphore(value: 0)
    private let thread = Locked<pthread_t?>(nil)
    private var failuresInARow = 0

    init(client: GooglePlayClient, database: Database) {
        self.client = client
        self.database = database
    }

    /// A claimed row is no other worker's for this long: its conversation's budget twice, and room.
    private var leaseMs: Int64 { Int64(client.configuration.timeoutMs) * 2 + 30_000 }

    func start() {
        let started = startThread(named: "google-finish") { [self] in run() }
        thread.withLock { $0 = started }
    }

    /// A delivery wrote a row: look now.
    func poke() {
        wake.signal()
    }

    func stop() {
        stopping.withLock { $0 = true }
        wake.signal()
        if let running = thread.withLock({ current in defer { current = nil }; return current }) {
            joinThread(running)
        }
    }

    private func run() {
        let store = GoogleFinishStore(connection: database.connection())
        var nextBacklogMs: Int64 = 0
        while !stopping.withLock({ $0 }) {
            let now = Timestamp.now()
            let claimed: [GoogleFinishStore.Claimed]
            do {
                let lease = AppleDate.sqlDateTime(ms: now.milliseconds + leaseMs)
                claimed = try store.transaction { try store.lease(upTo: Self.batch, now: now, until: lease) }
                if now.milliseconds >= nextBacklogMs {
                    let backlog = try store.backlog(now: now)
                    ServiceMetrics.googleFinishesBacklog(
                        oldestAgeSeconds: backlog.oldestAgeSeconds, soonestDeadlineSeconds: backlog.soonestDeadlineSeconds)
                    nextBacklogMs = now.milliseconds + Self.backlogIntervalMs
                }
            } catch {
                Log.event("google finish: database error: \(error)")
                pause(ms: Self.databaseRetryMs)
                continue
            }
            guard !claimed.isEmpty else {
                pause(ms: Self.idlePollMs)
                continue
            }
            record(Array(zip(claimed, call(claimed))), store)
        }
    }

    private func call(_ claimed: [GoogleFinishStore.Claimed]) -> [GoogleCallVerdict] {
        let verdicts = Locked([GoogleCallVerdict](repeating: .unavailable, count: claimed.count))
        let answered = DispatchGroup()
        for (index, row) in claimed.enumerated() {
            answered.enter()
            let submitted = client.finish(
                row.action, packageName: row.packageName, productID: row.productID, purchaseToken: row.purchaseToken
            ) { verdict in
                verdicts.withLock { $0[index] = verdict }
                answered.leave()
            }
            if !submitted { answered.leave() }
        }
        answered.wait()
        return verdicts.withLock { $0 }
    }

    private func record(_ results: [(GoogleFinishStore.Claimed, GoogleCallVerdict)], _ store: GoogleFinishStore) {
        let now = Timestamp.now()
        for (row, verdict) in results {
            let result = GoogleFinishRetry.result(verdict)
            ServiceMetrics.googleFinish(action: row.action.rawValue, result: result.metric)
            noteCall(row, error: result.error)
            do {
                let held = try store.transaction { () throws -> Bool in
                    switch GoogleFinishRetry.decide(verdict, failedAttempts: row.attempts + 1, nowMs: now.milliseconds) {
                    case .finished:
                        return try store.recordFinished(row, at: now)
                    case .retry(let atMs):
                        return try store.recordFailure(row, error: result.error ?? "", nextAttemptMs: atMs)
                    case .givenUp:
                        Log.event("google finish: \(row.transactionID): Google does not know its token; given up")
                        return try store.recordFailure(
                            row, error: result.error ?? "", nextAttemptMs: GoogleFinishRetry.givenUpAtMs)
                    }
                }
                if !held { Log.event("google finish: \(row.transactionID): its lease ended before its result was recorded") }
            } catch {
                Log.event("google finish: \(row.transactionID): result not recorded (\(error)); called again when its lease ends")
            }
        }
    }

    private func noteCall(_ row: GoogleFinishStore.Claimed, error: String?) {
        if let error {
            failuresInARow += 1
            if failuresInARow == 1 { Log.event("google finish: \(row.transactionID) not done (\(error)); retrying with backoff") }
        } else {
            if failuresInARow > 0 { Log.event("google finish: Google takes them again after \(failuresInARow) failures") }
            failuresInARow = 0
        }
    }

    private func pause(ms: Int) {
        _ = wake.wait(timeout: .now() + .milliseconds(ms))
    }
}
