/// How often an idle webhook dispatcher looks for new events. Every 200 ms, so
/// that an event goes out promptly; but a look that found nothing to send and
/// was slow (one user's events waiting behind an earlier one in backoff are
/// read and passed over on every look: thousands after an outage of the game's
/// endpoint) waits ten times its own duration, so that looking costs the
/// database at most about a tenth of its time, and never waits more than 5 s.
public enum WebhookPolling {
    public static let idleIntervalMs: Int64 = 200
    public static let longestIntervalMs: Int64 = 5000

    /// The wait before the next look, after one that took `lookMs` and found fewer events than it could take.
    public static func idleWaitMs(afterLookOf lookMs: Int64) -> Int64 {
        min(max(idleIntervalMs, lookMs * 10), longestIntervalMs)
    }
}
