import MariaDB

/// Reads the refund-request ledger for `iap_refund_requests`,
/// `iap_refund_request_oldest_pending_seconds` and `iap_refund_request_outcomes`
/// (ranges over `consumption_requests_dispatch`, status first; the outcomes
/// over the few rows Apple decided).
struct RefundRequestProbe {
    let connection: MariaDBConnection

    /// Every status is written, 0 when no row has it, so that an alert sees 0 rather than nothing.
    static let statuses = ["pending", "sent", "no_consent", "expired", "failed"]

    func read() throws(MariaDBError) {
        var counts = Dictionary(uniqueKeysWithValues: Self.statuses.map { ($0, 0) })
        for row in try connection.execute("SELECT status, COUNT(*) FROM consumption_requests GROUP BY status").rows {
            if let status = row[0], let count = row[1].flatMap({ Int($0) }) { counts[status] = count }
        }
        for (status, count) in counts {
            ServiceMetrics.refundRequests(status: status, count: count)
        }
        let oldest = try connection.execute(
            """
            SELECT TIMESTAMPDIFF(MICROSECOND, MIN(requested_at), UTC_TIMESTAMP(6)) FROM consumption_requests
            WHERE status = 'pending'
            """
        ).first?[0].flatMap { Double($0) } ?? 0
        ServiceMetrics.refundRequestOldestPendingAge(seconds: max(oldest, 0) / 1_000_000)
        for row in try connection.execute(
            """
            SELECT CASE WHEN status <> 'sent' THEN 'not_sent' ELSE COALESCE(refund_preference_sent, 'none') END,
              outcome, COUNT(*)
            FROM consumption_requests WHERE outcome IS NOT NULL GROUP BY 1, 2
            """
        ).rows {
            if let preference = row[0], let outcome = row[1], let count = row[2].flatMap({ Int($0) }) {
                ServiceMetrics.refundRequestOutcomes(preference: preference, outcome: outcome, count: count)
            }
        }
    }
}
