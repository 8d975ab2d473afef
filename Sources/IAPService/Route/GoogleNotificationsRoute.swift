import IAPCore
import MariaDB

/// POST /v1/notifications/google: Google Play's real-time developer
/// notifications, pushed by Cloud Pub/Sub. All of it on the accept thread that
/// read it, with that thread's database connection (but a PURCHASED push, which
/// `GoogleNotifiedPurchases` applies once Google has described the purchase): the push's OIDC token
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
    /// Nil without Google Play's API configured: a PURCHASED push is then only stored.
    let purchases: GoogleNotifiedPurchases?
    /// Nil without Google Play's API configured: a partial refund's push is then only stored.
    let voidedPurchases: GoogleVoidedPurchaseReader?

    init(
        push: GooglePushConfiguration?, packages: [String], caFile: String?, purchases: GoogleNotifiedPurchases?,
        voidedPurchases: GoogleVoidedPurchaseReader?
    ) {
        self.push = push
        self.keys = push.map { GooglePushKeyCache(url: $0.certsURL, caFile: caFile) }
        self.packages = packages
        self.purchases = purchases
        self.voidedPurchases = voidedPurchases
    }

    func handle(_ request: HTTPRequest, responder: Responder, worker: WorkerContext) {
        guard let push, let keys else { return responder.send(.error(.googlePushNotConfigured)) }
        if let refusal = Self.refusal(of: request.authorization, push: push, keys: keys) {
            Log.event("notifications/google: refused: \(refusal)")
            return responder.send(.error(.unauthorizedPush))
        }
        let message: GooglePushMessage
        do {
            message = try GooglePushMessage.parse(request.body)
        } catch {
            return responder.send(.error(.invalidField(error.field.isEmpty ? "message" : error.field, "is not a Pub/Sub push of a developer notification")))
        }
        // A PURCHASED push is applied once Google has been asked about its purchase, off this thread.
        if let purchases, case .readPurchase(let token) = GoogleNotificationPlan.plan(message.notification, packages: packages) {
            return purchases.apply(message, purchaseToken: token, responder: responder)
        }
        responder.send(Self.stored(message) {
            // What it did is in its row (`google_notifications.effect`).
            _ = try GoogleNotificationApplier(
                connection: worker.connection, packages: packages, voidedPurchases: voidedPurchases
            ).apply(message)
        })
    }

    /// 204 once `apply` has stored the message and committed; else the error that makes Pub/Sub push it again.
    static func stored(_ message: GooglePushMessage, apply: () throws -> Void) -> Response {
        do {
            try apply()
            return Response(status: 204, headers: [("Cache-Control", "no-store")], body: [])
        } catch let error as MariaDBError {
            Log.event("notifications/google: \(message.messageID) not stored: \(error)")
            return .error(error.apiError)
        } catch let error as GoogleUnavailable {
            Log.event("notifications/google: \(message.messageID) not stored: voided purchases not read: \(error)")
            return .error(.googleUnavailable)
        } catch is GoogleNotifiedPurchaseWriter.SettingsNotLoaded {
            Log.event("notifications/google: \(message.messageID) not stored: the catalog is not read yet")
            return .error(.databaseUnavailable)
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
            let now = SystemClock.wallMilliseconds() / 1000
            return GooglePushClaims.problem(
                verified.claims, audience: push.audience, serviceAccount: push.serviceAccount, now: now
            ).map { "claim \($0.rawValue)" }
        } catch {
            return "token \(error)"
        }
    }
}
