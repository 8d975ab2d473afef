import IAPCore
import MariaDB

/// SQL of the `notifications` table. The primary key on `notification_uuid`
/// makes a notification Apple sends again change nothing: of two requests
/// inserting one UUID at once, the second waits for the first to commit and
/// then finds the row there.
struct NotificationStore {
    let connection: MariaDBConnection

    /// Where a notification came from (`notifications.source`).
    enum Source: String {
        case post
        case sync
    }

    /// Inserts the notification as stored only (`applied` 0, effect `stored`);
    /// false when its UUID is there already.
    func insert(_ verified: VerifiedNotification, source: Source, at time: Timestamp) throws(MariaDBError) -> Bool {
        let notification = verified.notification
        // ON DUPLICATE KEY ... no-op rather than INSERT IGNORE, which would also
        // turn real errors into warnings. A row left alone counts 0 affected rows.
        return try connection.execute(
            """
            INSERT INTO notifications (notification_uuid, notification_type, subtype, environment, transaction_id,
              signed_date, signed_payload, received_at, source, applied, effect)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 'stored')
            ON DUPLICATE KEY UPDATE notification_uuid = notification_uuid
            """,
            [
                .text(notification.notificationUUID), .text(notification.notificationType),
                .optional(notification.subtype), .text(notification.environment),
                .optional(verified.transaction?.transactionID), .text(AppleDate.sqlDateTime(ms: notification.signedDate)),
                .text(verified.signedPayload), .text(time.sql), .text(source.rawValue),
            ]
        ).affectedRows == 1
    }

    /// What applying it did.
    func recordEffect(of notificationUUID: String, _ change: NotificationChange) throws(MariaDBError) {
        try connection.execute(
            "UPDATE notifications SET applied = ?, effect = ? WHERE notification_uuid = ?",
            [.integer(change.isApplied ? 1 : 0), .text(change.effect.rawValue), .text(notificationUUID)]
        ).requireRows(1, "UPDATE notifications effect")
    }

}
