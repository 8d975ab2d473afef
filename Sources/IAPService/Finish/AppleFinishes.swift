import Dispatch
import Glibc
import IAPCore

/// Finishes at Apple the transactions delivered with no client in the loop (docs/api.md, the end of
/// "POST /v1/notifications/apple"): it takes the rows of `transaction_finishes` (`FinishOutbox`),
/// calls Finish Transaction for each through the App Store Server API client (the Apple client's
/// thread and JWT), and records what Apple said: a 2xx sets `transactions.finished_at` and drops the
/// row; anything else is tried again later (`FinishRetryPolicy`), for as long as it takes.
///
/// It runs on a thread of its own with its own database connection, never on a request's path, and
/// only where the App Store Server API is configured. One round: lease up to `batch` due rows (a
/// lease per row, so several instances on one database never call twice for one row), make their
/// calls at once, wait for them, record each result. When nothing is due, it looks every `idlePollMs`.
final class TransactionFinisher: @unchecked Sendable {
    /// Calls made at once: few, so that finishes never crowd out the verifications' calls to Apple.
    static let batch = 4
    static let idlePollMs = 250
    /// After a database error, the next round waits this long.
    static let databaseRetryMs = 1000
    /// How often `iap_transaction_finishes_pending` is counted.
    static let pendingCountIntervalMs: Int64 = 5000

    private let client: AppStoreServerClient
    private let database: Database
    /// One call's limit (`IAP_APPLE_TIMEOUT_MS`); its wait for a turn among Apple's calls gets as much again.
    private let callTimeoutMs: Int
    private let stopping = Locked(false)
    private let wake = DispatchSemaphore(value: 0)
    private let thread = Locked<pthread_t?>(nil)
    // The rest belongs to the worker's thread.
    /// Calls without a 2xx in a row: the first of a run and the recovery are logged, not each.
    private var failuresInARow = 0
    private var databaseFailing = false

    init(client: AppStoreServerClient, database: Database, callTimeoutMs: Int) {
        self.client = client
        self.database = database
        self.callTimeoutMs = callTimeoutMs
    }

    /// A claimed row is no other worker's for this long: its call's wait and timeout, with room for
    /// the database calls around them. A lease must never end while its call may still be under way.
    private var leaseMs: Int64 { Int64(callTimeoutMs) * 2 + 30_000 }

    func start() {
        let started = startThread(named: "finish") { [self] in run() }
        thread.withLock { $0 = started }
        Log.event("finish: finishing at Apple the transactions delivered with no client")
    }

    /// Claims nothing more, lets the calls under way end and records them, then returns.
    func stop() {
        stopping.withLock { $0 = true }
        wake.signal()
        if let running = thread.withLock({ current in defer { current = nil }; return current }) {
            joinThread(running)
        }
    }

    private func run() {
        let store = FinishStore(connection: database.connection())
        var nextPendingCountMs: Int64 = 0
        while !stopping.withLock({ $0 }) {
            let now = Timestamp.now()
            let claimed: [FinishStore.Claimed]
            do {
                let lease = AppleDate.sqlDateTime(ms: now.milliseconds + leaseMs)
                claimed = try store.transaction { try store.lease(upTo: Self.batch, now: now, until: lease) }
                if now.milliseconds >= nextPendingCountMs {
                    ServiceMetrics.transactionFinishesPending(count: try store.pendingCount())
                    nextPendingCountMs = now.milliseconds + Self.pendingCountIntervalMs
                }
                noteDatabase(failing: nil)
            } catch {
                noteDatabase(failing: error)
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

    /// Makes the claimed rows' calls at once and waits for them all (this thread is the worker's own).
    private func call(_ claimed: [FinishStore.Claimed]) -> [FinishCallOutcome] {
        let outcomes = Locked([FinishCallOutcome](repeating: .notSent, count: claimed.count))
        let answered = DispatchGroup()
        for (index, row) in claimed.enumerated() {
            answered.enter()
            let deadline = Deadline(startNs: Clock.monotonicNanoseconds(), budgetMs: callTimeoutMs * 2)
            let submitted = client.finishTransaction(
                row.transactionID, environment: row.environment, timeoutMs: callTimeoutMs, deadline: deadline
            ) { outcome in
                outcomes.withLock { $0[index] = outcome }
                answered.leave()
            }
            if !submitted { answered.leave() }  // stays `notSent`
        }
        answered.wait()
        return outcomes.withLock { $0 }
    }

    /// Records each result in a database transaction of its own, so that one lost write costs no
    /// other row its result. One not recorded waits for its lease to end and is called again.
    private func record(_ results: [(FinishStore.Claimed, FinishCallOutcome)], _ store: FinishStore) {
        let now = Timestamp.now()
        for (row, outcome) in results {
            ServiceMetrics.transactionFinish(result: outcome.metricResult)
            noteCall(row, outcome)
            let decision = FinishRetryPolicy.decide(outcome, failedAttempts: row.attempts + 1, nowMs: now.milliseconds)
            do {
                let held = try store.transaction { () throws -> Bool in
                    switch decision {
                    case .finished:
                        return try store.recordFinished(row, at: now)
                    case .retry(let atMs, let countsAttempt):
                        return try store.recordFailure(
                            row, error: outcome.lastError ?? "", nextAttemptMs: atMs, countsAttempt: countsAttempt)
                    case .givenUp:
                        // Quoted and escaped: an id that is not digits may hold anything.
                        Log.event("finish: transaction \(String(reflecting: row.transactionID)) never sent (not digits); given up")
                        return try store.recordFailure(
                            row, error: outcome.lastError ?? "", nextAttemptMs: FinishRetryPolicy.givenUpAtMs,
                            countsAttempt: false)
                    }
                }
                if !held { Log.event("finish: transaction \(row.transactionID): its lease ended before its result was recorded") }
            } catch {
                Log.event("finish: transaction \(row.transactionID): result not recorded (\(error)); called again when its lease ends")
            }
        }
    }

    private func noteCall(_ row: FinishStore.Claimed, _ outcome: FinishCallOutcome) {
        if let error = outcome.lastError {
            failuresInARow += 1
            if failuresInARow == 1 {
                Log.event("finish: transaction \(row.transactionID) not finished (\(error)); retrying with backoff")
            }
        } else {
            if failuresInARow > 0 { Log.event("finish: Apple takes finishes again after \(failuresInARow) failures") }
            failuresInARow = 0
        }
    }

    private func noteDatabase(failing error: (any Error)?) {
        if let error, !databaseFailing {
            Log.event("finish: database error, retrying every \(Self.databaseRetryMs) ms: \(error)")
        } else if error == nil && databaseFailing {
            Log.event("finish: database reachable again")
        }
        databaseFailing = error != nil
    }

    /// Waits `ms`, or less when `stop` wakes it.
    private func pause(ms: Int) {
        _ = wake.wait(timeout: .now() + .milliseconds(ms))
    }
}
