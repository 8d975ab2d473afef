import IAPCore
import MariaDB
import Metrics
import Prometheus
internal import SignedData

/// `IAP_METRICS_LISTEN`: swift-metrics bootstrapped with swift-prometheus, and
/// a worker with a thread of its own (`worker`) that serves `GET /metrics` in the Prometheus text format
/// on that socket (never through nginx) and reads the retry-pending backlog
/// from the database every `backlogIntervalMs`. The thread never waits on a
/// client (`MetricsListener`), so neither a scrape nor a probe waits on one.
final class MetricsEndpoint: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let listener: MetricsListener

    /// How often the metrics thread counts the retry-pending backlog.
    static let backlogIntervalMs: UInt64 = 15_000

    /// Buckets of the latency histograms, in seconds: a version check takes
    /// milliseconds, a verification Apple's latency (up to `IAP_APPLE_TIMEOUT_MS`
    /// and the 55 s deadline).
    private static let latencyBuckets: [Double] = [
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
    ]

    /// Opens the listener and makes swift-prometheus the metrics backend; call
    /// before anything records a metric (a metric made earlier stays a no-op).
    /// - Throws: `ConfigurationError` naming `IAP_METRICS_LISTEN`.
    init(listen: ListenAddress) throws(ConfigurationError) {
        guard case .tcp(let host, let port) = listen else {
            throw ConfigurationError(variable: "IAP_METRICS_LISTEN", problem: "must be host:port")
        }
        listener = try MetricsListener.open(host: host, port: port)
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultValueHistogramBuckets = Self.latencyBuckets
        MetricsSystem.bootstrap(factory)
        ServiceMetrics.recordStart()
    }

    /// The metrics thread, a worker of the service's (`WorkerGroup`). `roots` and `verifier` give
    /// the certificate expiries, read at each scrape; with `webhook`, the webhook's backlog is read
    /// with the retry-pending one.
    func worker(database: Database, roots: TrustedRoots, verifier: SignedDataVerifier, webhook: Bool) -> any Worker {
        Scrape.watch { Self.sampleCertificates(roots: roots, verifier: verifier) }
        let connection = database.connection()
        return Serving(
            endpoint: self, backlog: RetryBacklogProbe(connection: connection),
            webhookBacklog: webhook ? WebhookBacklogProbe(connection: connection) : nil,
            refundRequests: RefundRequestProbe(connection: connection),
            subscriptions: SubscriptionProbe(connection: connection))
    }

    /// Serves scrapes and reads the backlogs every `backlogIntervalMs` until the service stops.
    private final class Serving: Worker {
        let threadName = "metrics"
        private let endpoint: MetricsEndpoint
        private let backlog: RetryBacklogProbe
        private let webhookBacklog: WebhookBacklogProbe?
        private let refundRequests: RefundRequestProbe
        private let subscriptions: SubscriptionProbe

        init(
            endpoint: MetricsEndpoint, backlog: RetryBacklogProbe, webhookBacklog: WebhookBacklogProbe?,
            refundRequests: RefundRequestProbe, subscriptions: SubscriptionProbe
        ) {
            self.endpoint = endpoint
            self.backlog = backlog
            self.webhookBacklog = webhookBacklog
            self.refundRequests = refundRequests
            self.subscriptions = subscriptions
        }

        func run(_ stop: StopRequest) {
            var nextBacklogNs: UInt64 = 0
            var backlogFailing = false
            var connections: [MetricsListener.Connection] = []
            while !stop.isRequested {
                let now = SystemClock.monotonicNanoseconds()
                if now >= nextBacklogNs {
                    backlogFailing = MetricsEndpoint.readBacklog(backlog, wasFailing: backlogFailing)
                    if let webhookBacklog, let read = try? webhookBacklog.read() {
                        ServiceMetrics.webhookPending(count: read.pending)
                        ServiceMetrics.webhookFailed(count: read.failed)
                        ServiceMetrics.webhookOldestPendingAge(seconds: read.oldestPendingSeconds)
                    }
                    try? refundRequests.read()
                    try? subscriptions.read()
                    nextBacklogNs = SystemClock.monotonicNanoseconds() + MetricsEndpoint.backlogIntervalMs * 1_000_000
                }
                let waitMs = (nextBacklogNs - min(nextBacklogNs, SystemClock.monotonicNanoseconds())) / 1_000_000 + 1
                endpoint.listener.serve(&connections, waitingAtMostMs: Int32(waitMs)) { endpoint.exposition() }
            }
            endpoint.listener.closeAll(connections)
        }

        func wake() {
            endpoint.listener.wakeUp()
        }
    }

    private func exposition() -> [UInt8] {
        Scrape.sampleAll()
        return registry.emitToBuffer()
    }

    /// Counts the backlog; logs when reading it starts or stops failing. Returns whether it failed.
    private static func readBacklog(_ probe: RetryBacklogProbe, wasFailing: Bool) -> Bool {
        do {
            ServiceMetrics.retryPendingBacklog(count: try probe.count())
            if wasFailing { Log.event("metrics: the retry-pending backlog is read again") }
            return false
        } catch {
            if !wasFailing { Log.event("metrics: the retry-pending backlog cannot be read: \(error)") }
            return true
        }
    }

    private static func sampleCertificates(roots: TrustedRoots, verifier: SignedDataVerifier) {
        let now = SystemClock.wallMilliseconds()
        for root in roots.lifetimes {
            ServiceMetrics.certificateExpiry(certificate: "root", subject: root.subject, days: root.daysLeft(nowMs: now))
        }
        if let leaf = verifier.latestLeafLifetime {
            // No subject: the leaf Apple signs with changes, and a series per leaf would keep the old one's days.
            ServiceMetrics.certificateExpiry(certificate: "latest_leaf", subject: "", days: leaf.daysLeft(nowMs: now))
        }
    }
}
