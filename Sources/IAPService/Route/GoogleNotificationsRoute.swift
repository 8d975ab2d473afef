import IAPCore
import MariaDB

/// POST /v1/notifications/google: Google Play's real-time developer
/// notifications, pushed by Cloud Pub/Sub. All of it on the accept thread that
/// read it, with that thread's database connection: the push's OIDC token
/// checked first (RS256 by a key of Google's JWKS, issuer, audience, service
/// account, times), anything else 401 with nothing stored; then the message
/// stored and applied in one database transaction (`GoogleNotificationApplier`),
/// and 204 only once that has committed. The same `messageId` again is 204 and
/// changes nothing; a database that cannot take it is 503, so that Pub/Sub
/// pushes it again.
struct GoogleNotificationsRoute: Sendable {
    /// Nil: `IAP_GOOGLE_PUSH_*` unset, every push 503 `google_not_configured`.
    let push: GooglePushConfiguration?
    let keys: GooglePushKeyCache?
    let packages: [String]

    init(push: GooglePushConfiguration?, packages: [String], caFile: String?) {
        self.push = push
        self.keys = push.map { GooglePushKeyCache(url: $0.certsURL, caFile: caFile) }
        self.packages = packages
    }

    func handle(_ request: HTTPRequest, worker: WorkerContext) -> Response {
        guard let push, let keys else { return .error(.googlePushNotConfigured) }
        if let refusal = Self.refusal(of: request.authorization, push: push, keys: keys) {
            Log.event("notifications/google: refused: \(refusal)")
            return .error(.unauthorizedPush)
        }
        let message: GooglePushMessage
        do {
            message = try GooglePushMessage.parse(request.body)
        } catch {
            return .error(.invalidField(error.field.isEmpty ? "message" : error.field, "is not a Pub/Sub push of a developer notification"))
        }
        do {
            // What it did is in its row (`google_notifications.effect`).
            _ = try GoogleNotificationApplier(connection: worker.connection, packages: packages).apply(message)
            return Response(status: 204, headers: [("Cache-Control", "no-store")], body: [])
        } catch let error as MariaDBError {
            Log.event("notifications/google: \(message.messageID) not stored: \(error)")
            return .error(error.apiError)
        } catch {
            Log.event("notifications/google: \(message.messageID) not stored: \(error)")
            return .error(.internalError)
        }
    }

    /// Why the `Authorization` header does not authenticate a push; nil when it does.
    static func refusal(of authorization: String?, push: GooglePushConfiguration, keys: GooglePushKeyCache) -> String? {
        guard let authorization, authorization.utf8.count > 7,
            authorization.prefix(7).lowercased() == "bearer "
        else { return "no Bearer token" }
        let token = String(authorization.dropFirst(7).trimmingPrefix(" "))
        do {
            let kid = try GooglePushToken.keyID(of: token)
            guard let known = keys.keys(for: kid) else { return "Google's keys could not be fetched" }
            let verified = try GooglePushToken.verify(token, keys: known)
            let now = Clock.wallMilliseconds() / 1000
            return GooglePushClaims.problem(
                verified.claims, audience: push.audience, serviceAccount: push.serviceAccount, now: now
            ).map { "claim \($0.rawValue)" }
        } catch {
            return "token \(error)"
        }
    }
}
