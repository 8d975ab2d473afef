import IAPCore
import MariaDB
import Metrics

/// Reads `subscriptions` for `iap_subscriptions{status}` (chains by status, over the
/// `subscriptions_status` index) and `iap_subscriptions_entitled` (the rows of the
/// `entitlements` view: claimed chains a player may use now, which time alone shrinks).
struct SubscriptionProbe {
    let connection: MariaDBConnection

    func read() throws(MariaDBError) {
        var counts = Dictionary(uniqueKeysWithValues: SubscriptionStatus.allCases.map { ($0.rawValue, 0) })
        for row in try connection.execute("SELECT status, COUNT(*) FROM subscriptions GROUP BY status").rows {
            if let status = row[0], let count = row[1].flatMap({ Int($0) }) { counts[status] = count }
        }
        for (status, count) in counts {
            ServiceMetrics.subscriptions(status: status, count: count)
        }
        let entitled = try connection.execute("SELECT COUNT(*) FROM entitlements").first?[0].flatMap { Int($0) } ?? 0
        ServiceMetrics.subscriptionsEntitled(count: entitled)
    }
}

extension ServiceMetrics {
    /// `iap_subscriptions{status}`: chains in `subscriptions` by status, every status written (0 when none).
    static func subscriptions(status: String, count: Int) {
        subscriptionsByStatus[[status]].record(count)
    }

    /// `iap_subscriptions_entitled`: chains a player may use now (the `entitlements` view).
    static func subscriptionsEntitled(count: Int) {
        subscriptionsEntitledNow.record(count)
    }

    private static let subscriptionsByStatus = MetricFamily<[String], Gauge>.gauges(
        "iap_subscriptions", labels: ["status"])
    private static let subscriptionsEntitledNow = Gauge(label: "iap_subscriptions_entitled")
}
