import Dispatch
import Glibc
import IAPCore

/// Answers the stores' refund requests (`consumption_requests`, docs/events.md "Refund
/// requests"): Apple's `CONSUMPTION_REQUEST`s with Send Consumption Information, Google Play's
/// refund reviews with `orders.reviewrefund`. On a thread of its own with its own database
/// connection: never while a store waits for the notification's answer. The calls go through
/// the App Store Server API client and `GooglePlayClient` (both on `AppleClient`'s thread);
/// this thread waits for each, one request at a time: stores ask rarely, and each request has
/// 12 (Apple) or 24 (Google) hours.
///
/// One step: lease the oldest due request (committed first, so that no other
/// iap-fcgi sends it), close it unsent when the store decided it already or its
/// deadline passed (`RefundRequestClosing`), give the game's webhook its chance to answer the
/// consumption (`RefundRequestReadiness`), decide what to send (`RefundRequestDecision`, the same
/// for both stores), write it in the store's words (`AppStoreConsumptionRequest`,
/// `GoogleRefundReviewRequest`), send it, and record what came of it
/// (`RefundRequestRetryPolicy`, `GoogleRefundReviewReply`). When nothing is due, it looks again
/// every second.
final class RefundRequestSender: Worker, @unchecked Sendable {
    /// When nothing is due, the next look is this much later.
    static let idleLookMs = 1000
    /// After a database error, the next look waits this long.
    static let databaseRetryMs = 1000

    /// Apple's requests are answered with it; nil: they wait (the App Store Server API is not configured).
    private let appStore: AppStoreServerClient?
    /// Google's reviews are answered with it; nil: they wait (Google Play is not configured).
    private let googlePlay: GooglePlayClient?
    /// The stores whose requests this sender leases: those it has a client for.
    private let stores: [PurchaseStore]
    private let database: Database
    private let webhookConfigured: Bool
    /// One PUT's limit (`IAP_APPLE_TIMEOUT_MS`).
    private let putTimeoutMs: Int
    /// A leased request is no other sender's for this long: it covers the longest call (a Google
    /// conversation has twice its timeout) with room for the database calls.
    private let leaseMs: Int64
    // The rest belongs to the sender's thread.
    private var databaseLog = DatabaseFailureLog(
        worker: "consumption", retry: .milliseconds(RefundRequestSender.databaseRetryMs))

    /// Nil when neither store's client is configured: nothing could be answered.
    init?(
        appStore: AppStoreServerClient?, googlePlay: GooglePlayClient?, database: Database, webhookConfigured: Bool,
        appleTimeoutMs: Int
    ) {
        stores = (appStore == nil ? [] : [.appStore]) + (googlePlay == nil ? [] : [.googlePlay])
        guard !stores.isEmpty else { return nil }
        self.appStore = appStore
        self.googlePlay = googlePlay
        self.database = database
        self.webhookConfigured = webhookConfigured
        putTimeoutMs = appleTimeoutMs
        leaseMs = Int64(max(appleTimeoutMs, (googlePlay?.configuration.timeoutMs ?? 0) * 2)) + 60_000
    }

    var threadName: String { "consumption" }

    /// Once stopped, leases nothing more, finishes the request under way (its PUT at most
    /// `putTimeoutMs`), then returns.
    func run(_ stop: StopRequest) {
        Log.event("consumption: answering the refund requests of \(stores.map(\.rawValue).joined(separator: " and "))")
        let store = RefundRequestStore(connection: database.connection())
        while !stop.isRequested {
            let now = Timestamp.now()
            let lease = AppleDate.sqlDateTime(ms: now.milliseconds + leaseMs)
            do {
                let leased = try store.leaseNext(of: stores, now: now, until: lease)
                databaseLog.note(nil)
                if let leased {
                    try answer(leased, lease: lease, store)
                    continue
                }
                stop.sleep(for: .milliseconds(Self.idleLookMs))
            } catch {
                // A leased request waits for its lease to end, then is looked at again.
                databaseLog.note(error)
                stop.sleep(for: .milliseconds(Self.databaseRetryMs))
            }
        }
    }

    /// Decides, sends and records one leased request.
    private func answer(_ requestID: UInt64, lease: String, _ store: RefundRequestStore) throws {
        guard let claimed = try store.claimed(requestID, lease: lease) else { return }
        let nowMs = SystemClock.wallMilliseconds()
        if let closing = RefundRequestClosing.of(outcome: claimed.outcome, deadlineMs: claimed.deadlineMs, nowMs: nowMs) {
            try store.closeUnsent(claimed, status: closing.status, error: closing.error(attempts: claimed.attempts))
            Log.event("consumption: request \(requestID) (transaction \(claimed.transactionID)) \(Self.describe(closing))")
            return
        }
        let step = RefundRequestReadiness.step(
            webhookConfigured: webhookConfigured, eventPending: claimed.eventPending, createdAtMs: claimed.createdAtMs,
            nowMs: nowMs)
        if case .wait(let untilMs) = step {
            return try store.postpone(claimed, untilMs: untilMs)
        }
        guard case .send(let answer) = RefundRequestDecision.decide(claimed.facts) else {
            try store.closeUnsent(claimed, status: .noConsent, error: nil)
            Log.event("consumption: request \(requestID) (transaction \(claimed.transactionID)): no consent, nothing sent")
            return
        }
        let sent: Sent
        switch claimed.store {
        case .appStore:
            sent = sendToAppStore(answer, claimed)
        case .googlePlay:
            guard let review = claimed.review else {
                try store.closeUnsent(claimed, status: .failed, error: "its notification is gone: no package to answer to")
                return
            }
            sent = sendToGooglePlay(answer, review, claimed)
        }
        // A decision that arrived during the call could not stop it, but stops any retry.
        let outcome = sent.outcome(SystemClock.wallMilliseconds(), try store.outcome(of: claimed) != nil)
        let recorded = try store.recordPut(
            claimed, body: sent.recordedBody, preference: sent.preference, outcome: outcome, at: Timestamp.now())
        ServiceMetrics.refundRequestPut(outcome: Self.metricOutcome(outcome))
        log(outcome, claimed, recorded: recorded)
    }

    /// One answer made to a store: what the row records of it, and its outcome once the time and
    /// whether the store decided meanwhile are known.
    private struct Sent {
        let recordedBody: String
        let preference: String?
        let outcome: (_ nowMs: Int64, _ storeDecided: Bool) -> RefundRequestRetryPolicy.Outcome
    }

    private func sendToAppStore(_ answer: RefundRequestAnswer, _ claimed: RefundRequestStore.Claimed) -> Sent {
        let request = AppStoreConsumptionRequest(answer)
        let body = request.body.serializedString
        let result = appStore.map { put(body, transactionID: claimed.transactionID, environment: claimed.environment, $0) }
            ?? .noAnswer("the App Store Server API is not configured")
        return Sent(recordedBody: body, preference: request.refundPreference) { nowMs, decided in
            RefundRequestRetryPolicy.outcome(
                of: result, attempt: claimed.attempts + 1, nowMs: nowMs, deadlineMs: claimed.deadlineMs,
                appleDecided: decided)
        }
    }

    /// One `orders.reviewrefund` conversation (429 and 5xx retried within its budget), waited for
    /// on this thread. The row records the body without the pending refund token, which is in
    /// its own column.
    private func sendToGooglePlay(
        _ answer: RefundRequestAnswer, _ review: RefundRequestStore.GoogleReview, _ claimed: RefundRequestStore.Claimed
    ) -> Sent {
        let request = GoogleRefundReviewRequest(answer, pendingRefundToken: review.pendingRefundToken)
        let answered = DispatchSemaphore(value: 0)
        let verdict = Locked(GoogleCallVerdict.unavailable)
        let submitted = googlePlay?.reviewRefund(
            packageName: review.packageName, orderID: review.orderID, body: Array(request.body.serializedString.utf8)
        ) { outcome in
            verdict.withLock { $0 = outcome }
            answered.signal()
        }
        if submitted == true { answered.wait() }
        let result = verdict.withLock { $0 }
        return Sent(recordedBody: request.recordedBody.serializedString, preference: request.refundPreference) {
            nowMs, decided in
            GoogleRefundReviewReply.outcome(
                of: result, attempt: claimed.attempts + 1, nowMs: nowMs, deadlineMs: claimed.deadlineMs, decided: decided)
        }
    }

    /// One PUT to the request's environment, waited for on this thread.
    private func put(
        _ body: String, transactionID: String, environment: AppleEnvironment, _ client: AppStoreServerClient
    ) -> RefundRequestRetryPolicy.Result {
        guard Self.isPathSafe(transactionID) else { return .answered(httpStatus: 400, errorCode: nil, retryAfterUnixMs: nil) }
        let answered = DispatchSemaphore(value: 0)
        let result = Locked(RefundRequestRetryPolicy.Result.noAnswer("no answer"))
        // One call: the retries are kept in the database (`RefundRequestRetryPolicy`), so that they
        // outlive the process and span the 12 hours Apple allows.
        let sequence = SingleCallSequence(
            environment: environment, budgetMs: putTimeoutMs,
            verdictWhenStopped: RefundRequestRetryPolicy.Result.noAnswer("no answer within \(putTimeoutMs) ms"))
        let exchange = ServerAPIExchange<SingleCallSequence<RefundRequestRetryPolicy.Result>>(
            "PUT", path: "/inApps/v2/transactions/consumption/" + transactionID, body: Array(body.utf8), client: client,
            reading: { outcome, retryAfter in
                switch outcome {
                case .answered(let httpStatus, let body):
                    return .answered(httpStatus: httpStatus, body: body, retryAfterUnixMs: retryAfter)
                case .transportFailure(let failure):
                    return .noAnswer("no answer (\(failure))")
                }
            }
        ) { outcome in
            result.withLock { $0 = outcome }
            answered.signal()
        }
        guard client.apple.submit(CallConversation(sequence, exchange: exchange, deadline: .never)) else { return .noAnswer("too many calls to Apple waiting") }
        answered.wait()
        return result.withLock { $0 }
    }

    /// Ids Apple issues are digits: anything else is never put in a path.
    private static func isPathSafe(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && id.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) }
    }

    private static func describe(_ closing: RefundRequestClosing) -> String {
        switch closing {
        case .decided(let outcome): return "expired unanswered: the store decided first (\(outcome.rawValue))"
        case .pastDeadline: return "expired unanswered"
        }
    }

    private static func metricOutcome(_ outcome: RefundRequestRetryPolicy.Outcome) -> String {
        switch outcome {
        case .sent: return "sent"
        case .retry: return "retry"
        case .expired: return "expired"
        case .failed: return "failed"
        }
    }

    private func log(_ outcome: RefundRequestRetryPolicy.Outcome, _ claimed: RefundRequestStore.Claimed, recorded: Bool) {
        let which = "request \(claimed.requestID) (transaction \(claimed.transactionID))"
        guard recorded else {
            return Log.event("consumption: \(which): its lease ended before its result was recorded")
        }
        switch outcome {
        case .sent:
            Log.event("consumption: \(which) sent")
        case .retry(let atMs, let error):
            Log.event("consumption: \(which): \(error); again at \(AppleDate.iso8601(ms: atMs))")
        case .expired(let error):
            Log.event("consumption: \(which) expired: \(error), and no time left before the deadline or the store decided")
        case .failed(let error):
            Log.event("consumption: \(which) failed: the store refused it (\(error))")
        }
    }
}
