import IAPCore
import MariaDB

/// PURCHASED pushes, which need Google's word before anything is written: the purchase is read
/// with productsv2 (`GooglePlayClient`, on the client's thread, so no accept thread waits on
/// Google), then stored and applied on a thread of this type's own (`consumer`) with its database connection
/// (`GoogleNotificationApplier` with the purchase read), and only then answered: 204 once
/// committed, 503 when Google or the database could not be asked (nothing stored; Pub/Sub pushes
/// it again). Its queue is bounded: a push it cannot take is 503 as well.
final class GoogleNotifiedPurchases: Sendable {
    private struct Job: Sendable {
        let message: GooglePushMessage
        let purchaseToken: String
        let read: GooglePurchaseRead
        let responder: Responder
    }

    private let client: GooglePlayClient
    private let settings: SettingsCache
    private let sandboxPolicy: SandboxPolicy
    /// Wakes the worker that consumes or acknowledges what was delivered.
    private let onDelivered: @Sendable () -> Void
    private let queue: WorkQueue<Job>

    init(
        client: GooglePlayClient, settings: SettingsCache, sandboxPolicy: SandboxPolicy, queueLimit: QueueLimit,
        onDelivered: @escaping @Sendable () -> Void
    ) {
        self.client = client
        self.settings = settings
        self.sandboxPolicy = sandboxPolicy
        self.onDelivered = onDelivered
        self.queue = WorkQueue(limit: queueLimit, name: "google_notified_purchases")
    }

    /// The thread that stores, applies and answers what Google's reads bring, a worker of the
    /// service's; stopping it closes the queue once the reads under way have come back.
    func consumer(database: Database) -> QueueConsumers {
        QueueConsumers(named: "google-push", threads: 1, close: { [queue] in queue.close() }) { [self] in
            let connection = WorkerContext(database: database).connection
            while let job = queue.pop() {
                job.responder.send(answer(job, connection: connection))
            }
        }
    }

    /// Reads the purchase `purchaseToken` names, then stores and applies `message` and answers.
    func apply(_ message: GooglePushMessage, purchaseToken: String, responder: Responder) {
        let unavailable = Response.error(.googleUnavailable)
        let submitted = client.readPurchase(
            packageName: message.notification.packageName, purchaseToken: purchaseToken
        ) { [queue] read in
            let job = Job(message: message, purchaseToken: purchaseToken, read: read, responder: responder)
            if !queue.push(job, bytes: purchaseToken.utf8.count) { responder.send(unavailable) }
        }
        if !submitted { responder.send(unavailable) }
    }

    private func answer(_ job: Job, connection: MariaDBConnection) -> Response {
        if case .unavailable(let reason) = job.read {
            Log.event("notifications/google: \(job.message.messageID): purchase not read: \(reason)")
            return .error(.googleUnavailable)
        }
        let notified = GoogleNotifiedPurchase(
            read: job.read, purchaseToken: job.purchaseToken, packageName: job.message.notification.packageName,
            packages: client.configuration.packages, settings: settings.current, sandboxPolicy: sandboxPolicy)
        let applier = GoogleNotificationApplier(
            connection: connection, packages: client.configuration.packages, notifiedPurchase: notified)
        return GoogleNotificationsRoute.stored(job.message) {
            if try applier.apply(job.message) == .stored(.delivered) { onDelivered() }
        }
    }
}
