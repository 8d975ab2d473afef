import IAPCore

/// The service's worker consuming or acknowledging at Google what was delivered.
typealias GoogleFinisher = FinishOutboxWorker<GoogleFinishes>

/// Consumes or acknowledges at Google what was delivered (the `google_finishes` outbox), well
/// within Google's 3 days after which a purchase not acknowledged is refunded: `GoogleFinisher`
/// leases due rows (`GoogleFinishStore`, one call per row across instances), calls Google through
/// `GooglePlayClient`, and records each result; a failure is tried again with backoff
/// (`GoogleFinishRetry`). The verifier nudges it after each delivery.
struct GoogleFinishes: FinishChannel {
    let client: GooglePlayClient

    var name: String { "google finish" }
    var threadName: String { "google-finish" }
    var startMessage: String? { nil }
    var storeName: String { "Google" }
    var unsent: GoogleCallVerdict { .unavailable }
    /// Its conversation's budget twice, and room.
    var leaseMs: Int64 { Int64(client.configuration.timeoutMs) * 2 + 30_000 }

    func reportBacklog(_ store: GoogleFinishStore, now: Timestamp) throws {
        let backlog = try store.backlog(now: now)
        ServiceMetrics.googleFinishesBacklog(
            oldestAgeSeconds: backlog.oldestAgeSeconds, soonestDeadlineSeconds: backlog.soonestDeadlineSeconds)
    }

    func call(_ row: GoogleFinishStore.Claimed, completion: @escaping @Sendable (GoogleCallVerdict) -> Void) -> Bool {
        client.finish(
            row.action, packageName: row.packageName, productID: row.productID, purchaseToken: row.purchaseToken,
            completion: completion)
    }

    func count(_ row: GoogleFinishStore.Claimed, _ verdict: GoogleCallVerdict) -> String? {
        let result = GoogleFinishRetry.result(verdict)
        ServiceMetrics.googleFinish(action: row.action.rawValue, result: result.metric)
        return result.error
    }

    func record(
        _ row: GoogleFinishStore.Claimed, _ verdict: GoogleCallVerdict, at now: Timestamp, _ store: GoogleFinishStore
    ) throws -> Bool {
        let error = GoogleFinishRetry.result(verdict).error ?? ""
        switch GoogleFinishRetry.decide(verdict, failedAttempts: row.attempts + 1, nowMs: now.milliseconds) {
        case .finished:
            return try store.recordFinished(row, at: now)
        case .retry(let atMs):
            return try store.recordFailure(row, error: error, nextAttemptMs: atMs)
        case .givenUp:
            Log.event("google finish: \(row.transactionID): Google does not know its token; given up")
            return try store.recordFailure(row, error: error, nextAttemptMs: GoogleFinishRetry.givenUpAtMs)
        }
    }

    func describe(_ row: GoogleFinishStore.Claimed) -> String { row.transactionID }
}
