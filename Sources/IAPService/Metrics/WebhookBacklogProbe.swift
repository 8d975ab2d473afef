import MariaDB

/// Reads the webhook's backlog for `iap_webhook_events_pending`,
/// `iap_webhook_events_failed` and `iap_webhook_oldest_pending_seconds`: ranges
/// over `events_dispatch` (status first). Only with `IAP_WEBHOOK_URL` set:
/// without a webhook every event stays `pending` (the game pulls them), and
/// counting them would measure nothing.
struct WebhookBacklogProbe {
    let connection: MariaDBConnection

    struct Backlog {
        let pending: Int
        let failed: Int
        /// Seconds since the oldest pending event was written; 0 when none waits.
        let oldestPendingSeconds: Double
    }

    func read() throws(MariaDBError) -> Backlog {
        let row = try connection.execute(
            """
            SELECT (SELECT COUNT(*) FROM events WHERE status = 'pending'),
                   (SELECT COUNT(*) FROM events WHERE status = 'failed'),
                   (SELECT TIMESTAMPDIFF(MICROSECOND, MIN(created_at), UTC_TIMESTAMP(6)) FROM events
                    WHERE status = 'pending')
            """
        ).first
        return Backlog(
            pending: row?[0].flatMap { Int($0) } ?? 0, failed: row?[1].flatMap { Int($0) } ?? 0,
            oldestPendingSeconds: (row?[2].flatMap { Double($0) } ?? 0) / 1_000_000)
    }
}
