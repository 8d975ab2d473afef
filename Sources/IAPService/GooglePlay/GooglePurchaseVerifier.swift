import IAPCore
import MariaDB

/// `POST /v1/google/purchases/verify` once its input is checked and its order found: the
/// purchase is read from Google (`GooglePlayClient`, on the client's thread), and Google's answer
/// comes to threads of this verifier's own, each with its database connection, which decide
/// (`GoogleAccountProof`, `GooglePurchaseDecision`), write the audit row, deliver
/// (`GooglePurchaseDelivery`) and answer. Its queue is bounded: an answer it cannot take is
/// `retry_later`, and nothing was delivered.
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

    static let threads = 2

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
        self.queue = WorkQueue(limit: queueLimit, name: "google_purchases")
        self.notifiedPurchases = GoogleNotifiedPurchases(
            client: client, settings: settings, sandboxPolicy: sandboxPolicy, queueLimit: queueLimit,
            onDelivered: { [finisher] in finisher.nudge() })
    }

    func start(database: Database) {
        for _ in 0..<Self.threads {
            _ = startThread(named: "google-verify") { [self] in
                let connection = WorkerContext(database: database).connection
                while let job = queue.pop() {
                    job.responder.send(answer(job, connection: connection))
                }
            }
        }
    }

    /// Takes no more answers.
    func stop() {
        queue.close()
    }

    /// Asks Google, then answers on the verifier's threads.
    func verify(_ request: Request, responder: Responder) {
        let retryLater = Response.googleVerify(VerifyAnswer(status: .retryLater, orderID: request.verify.orderID))
        let submitted = client.readPurchase(
            packageName: request.verify.packageName, purchaseToken: request.verify.purchaseToken
        ) { [queue] read in
            let job = Job(request: request, read: read, responder: responder)
            if !queue.push(job, bytes: request.verify.purchaseToken.utf8.count) { responder.send(retryLater) }
        }
        if !submitted { responder.send(retryLater) }
    }

    private func answer(_ job: Job, connection: MariaDBConnection) -> Response {
        let request = job.request
        var audit = GooglePurchaseAudit.Row(
            tokenSHA256: GoogleTransactionID.tokenSHA256(request.verify.purchaseToken), orderID: request.verify.orderID,
            userID: request.userID, appVersion: request.verify.appVersion, clientAddress: request.clientAddress,
            receivedAt: request.receivedAt)
        do {
            switch job.read {
            case .unavailable(let reason):
                Log.event("google/verify: purchase not read: \(reason)")
                _ = try GooglePurchaseAudit(connection: connection).record(audit)
                return .googleVerify(VerifyAnswer(status: .retryLater, orderID: request.verify.orderID))
            case .unknownToken:
                _ = try GooglePurchaseAudit(connection: connection).record(audit)
                return .googleVerify(VerifyAnswer(status: .notPaid, orderID: request.verify.orderID))
            case .purchase(let purchase, let body):
                audit.googleAnswer = body
                return try answer(purchase, request: request, audit: audit, connection: connection)
            }
        } catch {
            Log.event("google/verify: not delivered: \(error)")
            return .googleVerify(VerifyAnswer(status: .retryLater, orderID: request.verify.orderID))
        }
    }

    private func answer(
        _ purchase: GooglePurchase, request: Request, audit: GooglePurchaseAudit.Row, connection: MariaDBConnection
    ) throws -> Response {
        var audit = audit
        let verify = request.verify
        let accountOrder = try purchase.obfuscatedAccountID.flatMap(GoogleAccountProof.orderID(named:)).flatMap {
            orderID throws(MariaDBError) in
            try OrderStore(connection: connection).order(orderID).map {
                GoogleAccountProof.AccountOrder(orderID: orderID, userID: $0.userID)
            }
        }
        let orderID: String?
        switch GoogleAccountProof.verdict(
            accountID: purchase.obfuscatedAccountID, accountOrder: accountOrder, requestOrderID: verify.orderID,
            requestUserID: request.userID)
        {
        case .orderUserMismatch:
            _ = try GooglePurchaseAudit(connection: connection).record(audit)
            return .error(.orderUserMismatch)
        case .order(let named): orderID = named
        case .newOrder: orderID = nil
        }
        let userID = accountOrder.map { $0.orderID == orderID ? $0.userID : request.userID } ?? request.userID
        audit = GooglePurchaseAudit.Row(
            tokenSHA256: audit.tokenSHA256, orderID: orderID, userID: userID, appVersion: audit.appVersion,
            clientAddress: audit.clientAddress, receivedAt: audit.receivedAt, googleAnswer: audit.googleAnswer)
        let snapshot = settings.current
        var verdict = GooglePurchaseDecision.decide(
            purchase: purchase, request: verify, packages: client.configuration.packages,
            sandbox: GooglePurchaseDecision.SandboxRules(
                policy: sandboxPolicy, settingsAreKnown: snapshot.isLoaded, reviewVersion: snapshot.reviewVersion,
                sandboxUsers: snapshot.sandboxUsers),
            userID: userID)
        if case .deliverable = verdict {
            // Only what the catalog sells here, active, is delivered.
            if !snapshot.isLoaded {
                verdict = .settingsUnknown
            } else if snapshot.products[verify.productID] == nil {
                verdict = .rejected(reason: "product \(verify.productID) is unknown or inactive here")
            }
        }
        let environment: AppleEnvironment = purchase.isTestPurchase ? .sandbox : .production
        audit.environment = environment
        let shown = AppleTransaction(
            transactionID: GoogleTransactionID.of(orderID: purchase.orderID, purchaseToken: verify.purchaseToken),
            productID: verify.productID, quantity: purchase.lineItems.reduce(0) { $0 + $1.quantity },
            purchaseDateMs: purchase.completionTimeMilliseconds)
        audit.transactionID = shown.transactionID
        switch verdict {
        case .rejected(let reason):
            Log.event("google/verify: rejected: \(reason)")
            _ = try GooglePurchaseAudit(connection: connection).record(audit)
            return .googleVerify(VerifyAnswer(
                status: .rejected, environment: environment, orderID: orderID,
                transactions: [TransactionAnswer(transaction: shown, state: .rejected, orderID: nil)]))
        case .pending, .notPaid, .settingsUnknown:
            _ = try GooglePurchaseAudit(connection: connection).record(audit)
            let status: VerifyStatus = verdict == .pending ? .pending : verdict == .notPaid ? .notPaid : .retryLater
            return .googleVerify(VerifyAnswer(status: status, environment: environment, orderID: orderID))
        case .deliverable(let deliverable):
            let receiptID = try GooglePurchaseAudit(connection: connection).record(audit)
            let delivered = try GooglePurchaseDelivery(connection: connection).deliver(
                GooglePurchaseDelivery.Input(
                    deliverable: deliverable, purchase: purchase, request: verify, orderID: orderID, userID: userID,
                    receiptID: receiptID))
            let status = VerifyStatus.finalStatus(
                states: [delivered.state], namedTransactionID: nil, namedTransactionPresent: true)
            if delivered.state == .delivered { finisher.nudge() }
            return .googleVerify(VerifyAnswer(
                status: status, environment: environment, orderID: delivered.orderID ?? orderID,
                transactions: [delivered]))
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
    /// The verifier of a configured Google Play, its threads started; nil when not configured.
    /// - Throws: `ConfigurationError` for a service account key that cannot be read.
    static func started(
        configuration: ServiceConfiguration, settings: SettingsCache, apple: AppleClient, database: Database
    ) throws -> GooglePurchaseVerifier? {
        guard let account = try GooglePlayClient.account(configuration.googlePlay) else { return nil }
        let client = GooglePlayClient(
            configuration: configuration.googlePlay, account: account, caFile: configuration.caFile, driver: apple)
        let verifier = GooglePurchaseVerifier(
            client: client, settings: settings, sandboxPolicy: configuration.sandboxPolicy,
            queueLimit: configuration.verifyQueueLimit, database: database)
        verifier.start(database: database)
        return verifier
    }
}
