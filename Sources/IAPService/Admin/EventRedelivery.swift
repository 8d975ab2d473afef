import MariaDB

/// `iapctl events redeliver` and the console's Redeliver: a failed or sent
/// event back to pending, so that the webhook POSTs it again with 72 hours of retries.
public enum EventRedelivery {
    public enum Outcome: Equatable, Sendable {
        /// Pending again.
        case pending
        /// No such event.
        case noSuchEvent
        /// Still being sent (pending): nothing to redeliver.
        case stillSending(status: String)
    }

    public static func redeliver(eventID: UInt64, _ connection: MariaDBConnection) throws -> Outcome {
        let changed = try connection.execute(
            """
            UPDATE events SET status = 'pending', attempts = 0, next_attempt_at = NULL, lease_expires_at = NULL,
              sent_at = NULL, redelivered_at = UTC_TIMESTAMP(3)
            WHERE event_id = ? AND status IN ('failed', 'sent')
            """,
            [.integer(Int64(eventID))]
        ).affectedRows
        if changed == 1 { return .pending }
        let status = try connection.execute("SELECT status FROM events WHERE event_id = ?", [.integer(Int64(eventID))])
            .first?[0]
        guard let status else { return .noSuchEvent }
        return .stillSending(status: status)
    }
}
