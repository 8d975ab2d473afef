import IAPCore

/// The service's worker finishing at Apple the transactions delivered with no client in the loop.
typealias TransactionFinisher = FinishOutboxWorker<AppleFinishes>

/// Finishes at Apple the transactions delivered with no client in the loop (docs/api.md, the end of
/// "POST /v1/notifications/apple"): `TransactionFinisher` takes the rows of `transaction_finishes`
/// (`FinishOutbox`), calls Finish Transaction for each through the App Store Server API client (the
/// Apple client's thread and JWT), and records what Apple said: a 2xx sets
/// `transactions.finished_at` and drops the row; anything else is tried again later
/// (`FinishRetryPolicy`), for as long as it takes. Only where the App Store Server API is configured.
struct AppleFinishes: FinishChannel {
    let client: AppStoreServerClient
    /// One call's limit (`IAP_APPLE_TIMEOUT_MS`); its wait for a turn among Apple's calls gets as much again.
    let callTimeoutMs: Int

    var name: String { "finish" }
    var threadName: String { "finish" }
    var startMessage: String? { "finish: finishing at Apple the transactions delivered with no client" }
    var storeName: String { "Apple" }
    var unsent: FinishCallOutcome { .notSent }
    var leaseMs: Int64 { Int64(callTimeoutMs) * 2 + 30_000 }

    func reportBacklog(_ store: FinishStore, now: Timestamp) throws {
        ServiceMetrics.transactionFinishesPending(count: try store.pendingCount())
    }

    func call(_ row: FinishStore.Claimed, completion: @escaping @Sendable (FinishCallOutcome) -> Void) -> Bool {
        let deadline = Deadline(startNs: SystemClock.monotonicNanoseconds(), budgetMs: callTimeoutMs * 2)
        return client.finishTransaction(
            row.transactionID, environment: row.environment, timeoutMs: callTimeoutMs, deadline: deadline,
            completion: completion)
    }

    func count(_ row: FinishStore.Claimed, _ outcome: FinishCallOutcome) -> String? {
        ServiceMetrics.transactionFinish(result: outcome.metricResult)
        return outcome.lastError
    }

    func record(_ row: FinishStore.Claimed, _ outcome: FinishCallOutcome, at now: Timestamp, _ store: FinishStore) throws -> Bool {
        switch FinishRetryPolicy.decide(outcome, failedAttempts: row.attempts + 1, nowMs: now.milliseconds) {
        case .finished:
            return try store.recordFinished(row, at: now)
        case .retry(let atMs, let countsAttempt):
            return try store.recordFailure(
                row, error: outcome.lastError ?? "", nextAttemptMs: atMs, countsAttempt: countsAttempt)
        case .givenUp:
            // Quoted and escaped: an id that is not digits may hold anything.
            Log.event("finish: transaction \(String(reflecting: row.transactionID)) never sent (not digits); given up")
            return try store.recordFailure(
                row, error: outcome.lastError ?? "", nextAttemptMs: FinishRetryPolicy.givenUpAtMs, countsAttempt: false)
        }
    }

    func describe(_ row: FinishStore.Claimed) -> String { "transaction \(row.transactionID)" }
}
