import FastCGI
import Glibc
import IAPCore
import MariaDB
internal import SignedData

/// The whole service: accept threads that read requests and answer the quick
/// routes on their own database connection, Apple's client thread holding every
/// call to verifyReceipt, and delivery threads that finish verifications.
public final class Service: Sendable {
    private let configuration: ServiceConfiguration
    private let listener: FastCGIListener
    private let apple: AppleClient
    /// The App Store Server API on `apple`'s thread; nil without `IAP_APPSTORE_*` credentials.
    /// Made at start-up so that a bad key file stops the service then.
    let appStoreServer: AppStoreServerClient?
    /// Pushes `events` to `IAP_WEBHOOK_URL` on a thread of its own; nil without it.
    private let webhook: WebhookDispatcher?
    /// Finishes at Apple what was delivered with no client, on a thread of its own; nil without `appStoreServer`.
    private let finisher: TransactionFinisher?
    /// Verifies Google Play purchases and consumes them at Google, on threads of its own; nil without Google Play.
    private let googlePurchases: GooglePurchaseVerifier?
    /// Answers the stores' refund requests on a thread of its own; nil with neither store's client, or `IAP_CONSUMPTION=off`.
    private let refundRequests: RefundRequestSender?
    private let inflight = InflightCounter()
    private let signals: ShutdownSignals
    private let descriptorLimit: UInt64
    /// `IAP_METRICS_LISTEN`'s listener, whose thread is one of `background`; nil when unset.
    private let metrics: MetricsEndpoint?
    /// `IAP_CONSOLE_LISTEN`'s listener and threads; nil when unset.
    private let console: ConsoleEndpoint?
    /// The threads taking requests: the public accept threads, and the console's. They stop first,
    /// and the requests they took are answered before `background` stops.
    private let serving: WorkerGroup
    /// The workers behind the requests, started before them and stopped in reverse: whatever calls
    /// Apple (the outbox senders, the recorder, the signed transactions' batches) before Apple's
    /// client, so that its calls under way complete there; the threads that deliver Apple's answers
    /// after it, so that the answers of those calls are delivered (Google's PURCHASED pushes
    /// included); the webhook, then the metrics last.
    private let background: WorkerGroup

    /// Delivery threads: each holds a database connection for the step after Apple.
    static let deliveryThreads = 1
    /// Delivery threads that join only when Apple's answers queue up (see `ReceiptDelivery`).
    static let reserveDeliveryThreads = 7
    /// Threads recording and delivering StoreKit 2 transactions (`SignedTransactionBatches`).
    static let signedTransactionThreads = 2
    /// How long a stopping service waits for requests it holds, in seconds.
    static let shutdownGraceSeconds = 30

    /// Idle kept connections hold at most a quarter of the descriptors: the rest
    /// is for requests under way, each holding nginx's connection and one to Apple.
    static func idleConnectionLimit(descriptorLimit: UInt64) -> Int {
        max(16, Int(clamping: descriptorLimit / 4))
    }

    public init(configuration: ServiceConfiguration) throws {
        // Before any thread starts, so that every thread inherits the blocked signals.
        signals = ShutdownSignals()
        self.configuration = configuration
        Log.bootstrap(format: configuration.operations.logFormat)
        metrics = try configuration.operations.metricsListen.map(MetricsEndpoint.init)  // before any metric is made
        descriptorLimit = FileDescriptorLimit.raiseToMaximum()
        HeapReturn.start()
        let appStoreSigner = try AppStoreServerClient.signer(configuration)  // a bad key stops us before we listen
        MariaDBConnection.initialiseLibrary()
        let policy = ConnectionPolicy(
            allowedPeers: Set(configuration.allowedClientAddresses.map(\.bytes)),
            idleLimit: Self.idleConnectionLimit(descriptorLimit: descriptorLimit), log: Log.event)
        switch configuration.listen {
        case .inheritedSocket:
            listener = try FastCGIListener.inherited(policy: policy)
            try configuration.checkInheritedSocket(listeningOn: listener.localAddress.flatMap(IPAddress.init(bytes:)))
        case .unix(let path):
            listener = try FastCGIListener.open(path, isUnixPath: true, policy: policy)
        case .tcp(let host, let port):
            listener = try FastCGIListener.open(
                "\(host.contains(":") ? "[\(host)]" : host):\(port)", isUnixPath: false, policy: policy)
        }
        let database = Database(configuration: configuration.database)
        webhook = try configuration.webhook.map {
            try WebhookDispatcher(configuration: $0, caFile: configuration.caFile, database: database)
        }
        let settings = SettingsCache()
        let settingsRefresher = settings.refresher(from: database)
        apple = try AppleClient(endpoints: AppleEndpoints(configuration), waitingLimit: configuration.verifyQueueLimit)
        let apple = self.apple
        // One verifier for the JWS clients post and those Apple's Server API returns: one certificate cache.
        let roots = try Self.appleRoots(configuration)
        let signedData = SignedDataVerifier(roots: roots)
        let metricsThread = metrics?.worker(
            database: database, roots: roots, verifier: signedData, webhook: configuration.webhook != nil)
        appStoreServer = appStoreSigner.map {
            AppStoreServerClient(configuration: configuration, signer: $0, apple: apple, verifier: signedData)
        }
        finisher = appStoreServer.map {
            TransactionFinisher(AppleFinishes(client: $0, callTimeoutMs: configuration.appleTimeoutMs), database: database)
        }
        let receiptDelivery = ReceiptDelivery(
            bundleIDs: configuration.bundleIDs, sandboxPolicy: configuration.sandboxPolicy, settings: settings,
            queueLimit: configuration.verifyQueueLimit)
        let deliveryThreads = receiptDelivery.workers(
            count: Self.deliveryThreads, reserve: Self.reserveDeliveryThreads, database: database)
        let replays = ReplayCache()
        let replayAudit = ReplayAudit(queueLimit: configuration.verifyQueueLimit)
        let replayAuditThread = replayAudit.consumer(database: database)
        let checker = ReceiptChecker(
            mode: configuration.receiptVerifier, apple: apple, roots: try ReceiptChecker.roots(configuration),
            confirmation: appStoreServer.map(ServerAPIConfirmation.init))
        let checkedReceipts = CheckedReceiptBatches(
            receiptDelivery: receiptDelivery, queueLimit: configuration.verifyQueueLimit)
        let checkedHereThreads = checkedReceipts.consumers(database: database)
        let recorder = ReceiptRecorder(
            checker: checker, receiptDelivery: receiptDelivery, checkedReceipts: checkedReceipts,
            replays: replays, replayAudit: replayAudit,
            queueLimit: configuration.verifyQueueLimit,
            deadlineBudgetMs: VerificationDeadline.budgetMs(appleTimeoutMs: configuration.appleTimeoutMs))
        let recorderThread = recorder.consumer(database: database)
        let fetches = appStoreServer.map {
            SignedTransactionFetches(client: $0, verifier: signedData, appleTimeoutMs: configuration.appleTimeoutMs)
        }
        let signedTransactions = SignedTransactionBatches(
            delivery: SignedTransactionDelivery(
                bundleIDs: configuration.bundleIDs, sandboxPolicy: configuration.sandboxPolicy, settings: settings),
            fetches: fetches, queueLimit: configuration.verifyQueueLimit)
        let signedBatchThreads = signedTransactions.consumers(count: Self.signedTransactionThreads, database: database)
        let transactions = TransactionsRoute(verifier: signedData, batches: signedTransactions, fetches: fetches)
        googlePurchases = try GooglePurchaseVerifier.configured(
            configuration: configuration, settings: settings, apple: apple, database: database)
        refundRequests = configuration.consumption == .off ? nil : RefundRequestSender(
            appStore: appStoreServer, googlePlay: googlePurchases?.client, database: database,
            webhookConfigured: configuration.webhook != nil, appleTimeoutMs: configuration.appleTimeoutMs)
        let router = Router(
            orders: OrdersRoute(settings: settings), verify: VerifyRoute(recorder: recorder, replays: replays, replayAudit: replayAudit),
            transactions: transactions,
            googlePurchases: GooglePurchaseRoute(verifier: self.googlePurchases),
            notifications: NotificationsRoute(
                verifier: signedData, bundleIDs: configuration.bundleIDs, sandboxPolicy: configuration.sandboxPolicy,
                settings: settings),
            googleNotifications: GoogleNotificationsRoute(
                push: configuration.googlePush, packages: configuration.googlePlay.packages, caFile: configuration.caFile,
                purchases: self.googlePurchases?.notifiedPurchases,
                voidedPurchases: self.googlePurchases.map { GoogleVoidedPurchaseReader(client: $0.client) }),
            version: VersionRoute(settings: settings), health: HealthRoute())
        let appStoreServer = self.appStoreServer
        let inflight = self.inflight
        console = try configuration.console.map {
            try ConsoleEndpoint(
                $0, service: configuration, policy: policy, appStoreServer: appStoreServer, database: database,
                inflight: inflight)
        }
        let acceptor = RequestAcceptor(
            threads: configuration.acceptThreads, listener: listener, router: router, inflight: inflight,
            database: database)
        serving = WorkerGroup(([console, acceptor] as [(any Worker)?]).compactMap { $0 })
        let googlePushThread = googlePurchases?.notifiedPurchases.consumer(database: database)
        let googleVerifyThreads = googlePurchases?.consumers(database: database) ?? []
        let deliveringAppleAnswers: [any Worker] =
            deliveryThreads + googleVerifyThreads + ([checkedHereThreads, googlePushThread] as [(any Worker)?]).compactMap { $0 }
        let callingApple: [any Worker] = [signedBatchThreads, recorderThread]
        let backgroundWorkers: [WorkerThreads?] =
            [metricsThread.map { WorkerThreads($0) }, webhook.map { WorkerThreads($0) }] + deliveringAppleAnswers.map { WorkerThreads($0) }
            + [WorkerThreads(apple)] + callingApple.map { WorkerThreads($0) }
            + [refundRequests.map { WorkerThreads($0) }, googlePurchases?.finisher, finisher.map { WorkerThreads($0) }]
            + [WorkerThreads(replayAuditThread), WorkerThreads(settingsRefresher)]
        background = WorkerGroup(backgroundWorkers.compactMap { $0 })
    }

    /// The roots a StoreKit 2 JWS must chain to: `IAP_APPLE_ROOT_CA_FILE`, else
    /// Apple Root CA - G3. A file that cannot be read or holds no certificate
    /// stops the start, naming the variable.
    static func appleRoots(_ configuration: ServiceConfiguration) throws -> TrustedRoots {
        try .configured(file: configuration.appleRootCAFile, variable: "IAP_APPLE_ROOT_CA_FILE", fallback: .apple)
    }

    /// Serves until SIGTERM or SIGINT, then stops accepting, finishes what it
    /// holds (for at most `shutdownGraceSeconds`) and returns.
    public func run() {
        background.start()
        serving.start()
        if let console { Log.event("support console on \(console.configuration.listen)") }
        Log.event("serving on \(configuration.listen) with \(configuration.acceptThreads) accept threads, \(descriptorLimit) file descriptors")
        let signal = signals.wait()
        Log.event("signal \(signal): no new requests; finishing \(inflight.current) under way")
        serving.stop()
        let drained = inflight.waitUntilIdle(seconds: Self.shutdownGraceSeconds)
        background.stop()
        Log.event(drained ? "stopped" : "stopped with \(inflight.current) requests unanswered")
    }
}
