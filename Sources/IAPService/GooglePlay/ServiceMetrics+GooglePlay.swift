import Metrics

/// The Google Play outbox's metrics, beside the others (`ServiceMetrics`).
extension ServiceMetrics {
    /// `iap_google_finishes_total{action,result}`: one consume or acknowledge conversation, by
    /// `GoogleFinishRetry.result` (`finished`, `already_finished`, `not_found`, `unavailable`, `http_4xx`...).
    static func googleFinish(action: String, result: String) {
        googleFinishes[[action, result]].increment()
    }

    /// `iap_google_finishes_oldest_age_seconds`: how long the oldest row not yet taken by Google has
    /// waited (0: none); `iap_google_finishes_deadline_seconds`: the least time left before Google's
    /// 3-day automatic refund of any of them (an alert belongs well above 0; absent rows: 259200).
    static func googleFinishesBacklog(oldestAgeSeconds: Int64, soonestDeadlineSeconds: Int64?) {
        oldestGoogleFinish.record(oldestAgeSeconds)
        googleFinishDeadline.record(soonestDeadlineSeconds ?? 259_200)
    }

    private static let googleFinishes = MetricFamily<[String], Counter>.counters(
        "iap_google_finishes_total", labels: ["action", "result"])
    private static let oldestGoogleFinish = Gauge(label: "iap_google_finishes_oldest_age_seconds")
    private static let googleFinishDeadline = Gauge(label: "iap_google_finishes_deadline_seconds")
}
