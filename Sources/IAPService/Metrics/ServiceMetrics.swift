import IAPCore
import Metrics

/// Every metric of the service, named once here, through swift-metrics (the
/// ecosystem's API; `MetricsEndpoint` bootstraps it with swift-prometheus when
/// `IAP_METRICS_LISTEN` is set, and without it every call is a no-op).
///
/// Metrics whose labels come from a small fixed set (routes, statuses,
/// environments) are made once per label set and kept, so that a request costs
/// one lookup of our own, an atomic add and a histogram update, never a
/// registry lookup (docs/design/operating.md has the measured cost). No label ever
/// holds user input (a path outside the routes is `other`).
///
/// For the notifications and webhook code: `notificationReceived(type:subtype:)`,
/// `notificationRejected(reason:)`, `webhookAttempt(outcome:)`,
/// `webhookPending(count:)`, `webhookFailed(count:)` and
/// `webhookOldestPendingAge(seconds:)` are here, ready to be called.
enum ServiceMetrics {
    /// The route label of a path that is none of the contract's.
    static let otherRoute = "other"

    /// At start-up: `iap_build_info{version} 1`, to join a version onto other
    /// series, and the gauges that exist before their first event, at 0.
    static func recordStart() {
        Gauge(label: "iap_build_info", dimensions: [("version", ServiceVersion.current)]).record(1)
        appleCallsInFlight(0)
    }

    // MARK: requests (`Responder`)

    /// `iap_requests_total{route,status}` and `iap_request_duration_seconds{route}`: one
    /// lookup by the route's case and the status, then an atomic add and a histogram of
    /// seconds as `Double` (cheaper to bucket than the `Duration` of swift-metrics' `Timer`).
    static func requestAnswered(route: Route?, status: Int, nanoseconds: UInt64) {
        let series = requestSeries[RequestKey(route: route, status: status)]
        series.count.increment()
        series.seconds.record(Double(nanoseconds) / 1e9)
    }

    /// A route (nil: `other`) and a status.
    private struct RequestKey: Hashable, Sendable {
        let route: Route?
        let status: Int

        var routeLabel: String { route?.path ?? otherRoute }
    }

    private static let requestSeries = MetricFamily<RequestKey, (count: Counter, seconds: Recorder)> { key in
        (
            Counter(label: "iap_requests_total", dimensions: [("route", key.routeLabel), ("status", String(key.status))]),
            Recorder(label: "iap_request_duration_seconds", dimensions: [("route", key.routeLabel)], aggregate: true)
        )
    }

    // MARK: Apple (`AppleClient`, `ReceiptConversation`)

    /// One call to Apple ended: `iap_apple_calls_total{endpoint,environment,status}`
    /// (`status`: the HTTP status, or `timeout`, `tls`, `connection`) and
    /// `iap_apple_call_duration_seconds{endpoint,environment}`.
    static func appleCallEnded(endpoint: String, environment: AppleEnvironment, status: String, nanoseconds: UInt64) {
        let environmentLabel = environment.rawValue
        appleCalls[[endpoint, environmentLabel, status]].increment()
        appleCallDurations[[endpoint, environmentLabel]].record(Double(nanoseconds) / 1e9)
    }

    /// A Server API call answered 429: `iap_server_api_rate_limited_total{environment}`.
    static func serverAPIRateLimited(environment: AppleEnvironment) {
        serverAPIRateLimits[[environment.rawValue]].increment()
    }

    /// Apple's `status` in a verifyReceipt answer: `iap_apple_receipt_status_total{environment,apple_status}`
    /// (`none` when the answer had no status Apple documents).
    static func appleReceiptStatus(environment: AppleEnvironment, appleStatus: Int?) {
        appleStatuses[[environment.rawValue, appleStatus.map(String.init) ?? "none"]]
            .increment()
    }

    /// `iap_apple_calls_in_flight`: transfers under way now (set by the client's thread).
    static func appleCallsInFlight(_ count: Int) {
        appleInFlight.record(count)
    }

    private static let appleCalls = MetricFamily<[String], Counter>.counters(
        "iap_apple_calls_total", labels: ["endpoint", "environment", "status"])
    private static let appleCallDurations = MetricFamily<[String], Recorder>.histograms(
        "iap_apple_call_duration_seconds", labels: ["endpoint", "environment"])
    private static let serverAPIRateLimits = MetricFamily<[String], Counter>.counters(
        "iap_server_api_rate_limited_total", labels: ["environment"])
    private static let appleStatuses = MetricFamily<[String], Counter>.counters(
        "iap_apple_receipt_status_total", labels: ["environment", "apple_status"])
    private static let appleInFlight = Gauge(label: "iap_apple_calls_in_flight")

    // MARK: queues (`WorkQueue`, `AppleClient`)

    /// `iap_queue_rejections_total{queue}`: a job a full queue refused (its request answered `retry_later`).
    static func queueRejected(_ queue: String) {
        queueRejections[[queue]].increment()
    }

    /// Makes `depth` read at every scrape as `iap_queue_depth{queue}`.
    static func watchQueue(_ queue: String, depth: @escaping @Sendable () -> Int) {
        Scrape.watch { queueDepths[[queue]].record(depth()) }
    }

    private static let queueRejections = MetricFamily<[String], Counter>.counters(
        "iap_queue_rejections_total", labels: ["queue"])
    private static let queueDepths = MetricFamily<[String], Gauge>.gauges("iap_queue_depth", labels: ["queue"])

    // MARK: the database (`DeliveryTransaction`)

    /// `iap_database_errors_total{code}`: a database transaction failed for good.
    static func databaseError(code: UInt32) {
        databaseErrors[[String(code)]].increment()
    }

    /// `iap_database_retries_total{code}`: a deadlock (1213) or lock wait timeout (1205) ran its transaction again.
    static func databaseRetried(code: UInt32) {
        databaseRetries[[String(code)]].increment()
    }

    /// `iap_retry_pending_receipts`: receipts unverified and not given up or superseded (`BacklogProbe`).
    static func retryPendingBacklog(count: Int) {
        retryPending.record(count)
    }

    private static let databaseErrors = MetricFamily<[String], Counter>.counters(
        "iap_database_errors_total", labels: ["code"])
    private static let databaseRetries = MetricFamily<[String], Counter>.counters(
        "iap_database_retries_total", labels: ["code"])
    private static let retryPending = Gauge(label: "iap_retry_pending_receipts")

    // MARK: signed data (`TransactionsRoute`, `CertificateExpiry`)

    /// `iap_jws_verification_failures_total{reason}`: a JWS refused (`SignedDataError`'s raw value).
    static func jwsVerificationFailed(reason: String) {
        jwsFailures[[reason]].increment()
    }

    /// `iap_certificate_expiry_days{certificate,subject}`: days until the certificate's `notValidAfter`.
    static func certificateExpiry(certificate: String, subject: String, days: Double) {
        certificateDays[[certificate, subject]].record(days)
    }

    private static let jwsFailures = MetricFamily<[String], Counter>.counters(
        "iap_jws_verification_failures_total", labels: ["reason"])
    private static let certificateDays = MetricFamily<[String], Gauge>.gauges(
        "iap_certificate_expiry_days", labels: ["certificate", "subject"])

    // MARK: notifications and the webhook (for their code to call)

    /// `iap_notifications_total{type,subtype}`: an App Store Server Notification accepted.
    static func notificationReceived(type: String, subtype: String?) {
        notifications[[type, subtype ?? ""]].increment()
    }

    /// `iap_notifications_rejected_total{reason}`: a notification refused (bad JWS, unknown bundle, ...).
    static func notificationRejected(reason: String) {
        notificationRejections[[reason]].increment()
    }

    /// `iap_webhook_attempts_total{outcome}`: one push to the game's webhook
    /// (`outcome`: `delivered`, `http_5xx`, `timeout`, ... a small fixed set).
    static func webhookAttempt(outcome: String) {
        webhookAttempts[[outcome]].increment()
    }

    /// `iap_webhook_events_pending`: events waiting to be pushed.
    static func webhookPending(count: Int) {
        webhookPendingEvents.record(count)
    }

    /// `iap_webhook_events_failed`: events given up (`status = 'failed'`).
    static func webhookFailed(count: Int) {
        webhookFailedEvents.record(count)
    }

    /// `iap_webhook_oldest_pending_seconds`: the age of the oldest event waiting (0: none).
    static func webhookOldestPendingAge(seconds: Double) {
        webhookOldestPending.record(seconds)
    }

    private static let notifications = MetricFamily<[String], Counter>.counters(
        "iap_notifications_total", labels: ["type", "subtype"])
    private static let notificationRejections = MetricFamily<[String], Counter>.counters(
        "iap_notifications_rejected_total", labels: ["reason"])
    private static let webhookAttempts = MetricFamily<[String], Counter>.counters(
        "iap_webhook_attempts_total", labels: ["outcome"])
    private static let webhookPendingEvents = Gauge(label: "iap_webhook_events_pending")
    private static let webhookFailedEvents = Gauge(label: "iap_webhook_events_failed")
    private static let webhookOldestPending = Gauge(label: "iap_webhook_oldest_pending_seconds")

    // MARK: refund requests (CONSUMPTION_REQUEST)

    /// `iap_refund_request_puts_total{outcome}`: one Send Consumption Information PUT
    /// (`outcome`: `sent`, `retry`, `expired`, `failed`).
    static func refundRequestPut(outcome: String) {
        refundRequestPuts[[outcome]].increment()
    }

    /// `iap_refund_requests{status}`: requests in `consumption_requests` by status (`RefundRequestProbe`).
    static func refundRequests(status: String, count: Int) {
        refundRequestsByStatus[[status]].record(count)
    }

    /// `iap_refund_request_oldest_pending_seconds`: how long ago Apple asked for the oldest request still pending (0: none).
    static func refundRequestOldestPendingAge(seconds: Double) {
        refundRequestOldestPending.record(seconds)
    }

    /// `iap_refund_request_outcomes{preference,outcome}`: requests Apple decided (`refunded`, `declined`), by the
    /// `refundPreference` sent (`DECLINE`, `GRANT_FULL`, `GRANT_PRORATED`, `none` sent without one, `not_sent`).
    static func refundRequestOutcomes(preference: String, outcome: String, count: Int) {
        refundRequestOutcomeCounts[[preference, outcome]].record(count)
    }

    private static let refundRequestPuts = MetricFamily<[String], Counter>.counters(
        "iap_refund_request_puts_total", labels: ["outcome"])
    private static let refundRequestsByStatus = MetricFamily<[String], Gauge>.gauges(
        "iap_refund_requests", labels: ["status"])
    private static let refundRequestOldestPending = Gauge(label: "iap_refund_request_oldest_pending_seconds")
    private static let refundRequestOutcomeCounts = MetricFamily<[String], Gauge>.gauges(
        "iap_refund_request_outcomes", labels: ["preference", "outcome"])
}
