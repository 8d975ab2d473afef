import Metrics

/// The finish worker's metrics, beside the others (`ServiceMetrics`).
extension ServiceMetrics {
    /// `iap_transaction_finishes_total{result}`: one Finish Transaction call, by
    /// `FinishCallOutcome.metricResult` (`finished`, `rate_limited`, `http_4xx`, `http_5xx`, `timeout`, ...).
    static func transactionFinish(result: String) {
        transactionFinishes[[result]].increment()
    }

    /// `iap_transaction_finishes_pending`: deliveries whose finish Apple has not taken yet.
    static func transactionFinishesPending(count: Int) {
        pendingTransactionFinishes.record(count)
    }

    private static let transactionFinishes = MetricFamily<[String], Counter>.counters(
        "iap_transaction_finishes_total", labels: ["result"])
    private static let pendingTransactionFinishes = Gauge(label: "iap_transaction_finishes_pending")
}
