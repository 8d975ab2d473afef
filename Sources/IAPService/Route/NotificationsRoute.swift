import IAPCore
import MariaDB
internal import SignedData

/// POST /v1/notifications/apple: App Store Server Notifications V2 (docs/api.md).
/// All of it on the accept thread that read it, with that thread's database
/// connection, as orders are: every JWS verified offline (no call to Apple
/// while Apple waits), then the notification stored and applied in one
/// database transaction (`NotificationApplier`), and 200 only once that has
/// committed. A repeat of a stored notification is 200 and changes nothing;
/// one that does not verify or is not ours is 400 `invalid_signed_data`; a
/// database that cannot take it is 503, so that Apple sends it again.
struct NotificationsRoute: Sendable {
    let verifier: SignedDataVerifier
    let bundleIDs: [String]
    let sandboxPolicy: SandboxPolicy
    let settings: SettingsCache

    func handle(_ request: HTTPRequest, worker: WorkerContext) -> Response {
        let signedPayload: String
        do {
            signedPayload = try NotificationRequest.signedPayload(body: request.body)
        } catch {
            return .error(error)
        }
        let verified: VerifiedNotification
        do {
            verified = try VerifiedNotification.verify(signedPayload, verifier: verifier, bundleIDs: bundleIDs)
        } catch {
            Log.event("notifications/apple: refused: \(error.reason)")
            ServiceMetrics.notificationRejected(reason: error.metricReason)
            return .error(.invalidNotification)
        }
        let snapshot = settings.current
        let applier = NotificationApplier(
            connection: worker.connection, sandboxPolicy: sandboxPolicy, settingsAreKnown: snapshot.isLoaded,
            sandboxUsers: snapshot.sandboxUsers)
        let notification = verified.notification
        do {
            // What it did is in its row (`notifications.effect`); the request's own log line says it was answered.
            _ = try applier.apply(verified, source: .post)
            ServiceMetrics.notificationReceived(type: notification.notificationType, subtype: notification.subtype)
            return .json(200, .object([
                "status": .string("accepted"), "notification_uuid": .string(notification.notificationUUID),
            ]))
        } catch let error as MariaDBError {
            Log.event("notifications/apple: \(notification.notificationUUID) not stored: \(error)")
            return .error(error.apiError)
        } catch {
            Log.event("notifications/apple: \(notification.notificationUUID) not stored: \(error)")
            return .error(.internalError)
        }
    }
}
