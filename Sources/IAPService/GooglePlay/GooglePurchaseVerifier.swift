import IAPCore
import MariaDB

/// `POST /v1/google/purchases/verify` once its input is checked and its order found: the
/// purchase is read from Google (`GooglePlayClient`, on the client's thread), and Google's answer
/// comes to threads of this verifier's own, each with its database connection, which decide,
/// write the audit row and deliver, and answer. As Apple's verifications (`ReceiptDelivery`), the
/// answers waiting are taken together, up to `batchLimit`, and written in one database
/// transaction with one statement per table (`GoogleVerifyBatch`), answered once it has
/// committed. Its queue is bounded: an answer it cannot take is `retry_later`, and nothing was
/// delivered.
final class GooglePurchaseVerifier: Sendable {
    /// A checked request: what the route resolved before Google is asked.
    struct Request: Sendable {
        let verify: GoogleVerifyRequest
        /// The user the goods go to unless the purchase's account id names another order of theirs.
        let userID: String
        let clientAddress: String?
        let receivedAt: Timestamp
    }

    private struct Job: Sendable {
        let request: Request
        let read: GooglePurchaseRead
        let responder: Responder
    }

    /// One thread takes every answer waiting, so that batches are full; more join only when
    /// answers back up (over `ReceiptDelivery.backlogThreshold`), as Apple's delivery threads do.
    static let threads = 1
    static let reserveThreads = 3
    /// Google's answers written in one database transaction, at most.
    static let batchLimit = ReceiptDelivery.batchLimit

    /// The Play Developer API client, shared with the refund-review sender (one access token).
    let client: GooglePlayClient
    private let settings: SettingsCache
    private let sandboxPolicy: SandboxPolicy
    private let queue: WorkQueue<Job>
    /// Consumes at Google what the verifier delivered (`google_finishes`); the service's workers start and stop it.
    let finisher: WorkerThreads
    /// PURCHASED pushes, read from Google by the same client and delivered under the same rules.
    let notifiedPurchases: GoogleNotifiedPurchases

    init(
        client: GooglePlayClient, settings: SettingsCache, sandboxPolicy: SandboxPolicy, queueLimit: QueueLimit,
        database: Database
    ) {
        self.finisher = WorkerThreads(GoogleFinisher(GoogleFinishes(client: client), database: database))
        self.client = client
        self.settings = settings
        self.sandboxPolicy = sandboxPolicy
        self.queue = WorkQueue(
            limit: queueLimit, name: "google_purchases", backlogThreshold: ReceiptDelivery.backlogThreshold)
        self.notifiedPurchases = GoogleNotifiedPurchases(
            client: client, settings: settings, sandboxPolicy: sandboxPolicy, queueLimit: queueLimit,
            onDelivered: { [finisher] in finisher.nudge() })
    }

    /// The google-verify threads: `threads` that take every answer waiting, and `reserveThreads`
    /// more that join only while answers back up. Stopping them closes the queue; what it holds
    /// is still written and answered.
    func consumers(database: Database) -> [QueueConsumers] {
        [(Self.threads, false), (Self.reserveThreads, true)].map { threads, isReserve in
            QueueConsumers(named: "google-verify", threads: threads, close: { [queue] in queue.close() }) { [self] in
                let connection = WorkerContext(database: database).connection
                while let batch = isReserve
                    ? queue.popBacklog(upTo: Self.batchLimit) : queue.pop(upTo: Self.batchLimit)
                {
                    let responses = answers(batch, connection: connection)
                    // The batch's access lines go out in one write.
                    Log.gathered {
                        for (job, response) in zip(batch, responses) { job.responder.send(response) }
                    }
                }
            }
        }
    }

    /// Asks Google, then answers on the verifier's threads.
    func verify(_ request: Request, responder: Responder) {
        let retryLater = Response.googleVerify(VerifyAnswer(status: .retryLater, orderID: request.verify.orderID))
        let submitted = client.readPurchase(
            packageName: request.verify.packageName, purchaseToken: request.verify.purchaseToken
        ) { [queue] read in
            if case .unavailable(let reason) = read { Log.event("google/verify: purchase not read: \(reason)") }
            let job = Job(request: request, read: read, responder: responder)
            if !queue.push(job, bytes: request.verify.purchaseToken.utf8.count) { responder.send(retryLater) }
        }
        if !submitted { responder.send(retryLater) }
    }

    /// The batch written in one database transaction, run again whole when it lost to another.
    /// When it cannot be written (a deadlock on every attempt, a row the database refuses),
    /// nothing of it stays, and each is written again on its own, so that one cannot fail the
    /// others: a purchase token is still delivered once, as the delivery finds what another
    /// request for it committed.
    private func answers(_ batch: [Job], connection: MariaDBConnection) -> [Response] {
        let write = GoogleVerifyWrite(
            connection: connection, settings: settings.current, packages: client.configuration.packages,
            sandboxPolicy: sandboxPolicy)
        var written: [GoogleVerifyWrite.Written]?
        if batch.count > 1 {
            do {
                written = try connection.transactionRetryingDeadlocks(attempts: ReceiptDelivery.attempts) {
                    try GoogleVerifyBatch(write: write).write(batch.map { ($0.request, $0.read) })
                }
            } catch {
                Log.event("google/verify: \(batch.count) answers not written together (\(error)), each alone")
            }
        }
        let results = written ?? batch.map { answerAlone($0, write: write) }
        if results.contains(where: \.delivered) { finisher.nudge() }
        return results.map(\.response)
    }

    /// One answer in a database transaction of its own. When it cannot be written, the request
    /// still leaves its audit row, and answers `retry_later`: nothing was delivered.
    private func answerAlone(_ job: Job, write: GoogleVerifyWrite) -> GoogleVerifyWrite.Written {
        do {
            return try write.connection.transactionRetryingDeadlocks(attempts: ReceiptDelivery.attempts) {
                try write.write(job.request, read: job.read)
            }
        } catch {
            Log.event("google/verify: not delivered: \(error)")
            do {
                _ = try GooglePurchaseAudit(connection: write.connection).record(
                    GoogleVerifyWrite.auditRow(job.request, read: job.read))
            } catch {
                Log.event("google/verify: audit row not written: \(error)")
            }
            return .answer(VerifyAnswer(status: .retryLater, orderID: job.request.verify.orderID))
        }
    }
}

extension Response {
    /// A verify answer in the verify routes' shape, with `"store": "google_play"`.
    static func googleVerify(_ answer: VerifyAnswer) -> Response {
        var body = answer.json().objectValue ?? JSONObject()
        body.members.append((key: "store", value: .string(PurchaseStore.googlePlay.rawValue)))
        var response = json(answer.httpStatus, .object(body), retryAfterSeconds: answer.retryAfterSeconds)
        response.outcome = AnswerOutcome(
            verifyStatus: answer.status.rawValue, appleStatus: nil, environment: answer.environment?.rawValue)
        return response
    }
}

extension GooglePurchaseVerifier {
    /// The verifier of a configured Google Play (its threads are `consumers`); nil when not configured.
    /// - Throws: `ConfigurationError` for a service account key that cannot be read.
    static func configured(
        configuration: ServiceConfiguration, settings: SettingsCache, apple: AppleClient, database: Database
    ) throws -> GooglePurchaseVerifier? {
        guard let account = try GooglePlayClient.account(configuration.googlePlay) else { return nil }
        let client = GooglePlayClient(
            configuration: configuration.googlePlay, account: account, caFile: configuration.caFile, driver: apple)
        return GooglePurchaseVerifier(
            client: client, settings: settings, sandboxPolicy: configuration.sandboxPolicy,
            queueLimit: configuration.verifyQueueLimit, database: database)
    }
}
