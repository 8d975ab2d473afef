/// Everything iap-fcgi reads from its environment, validated once at start-up.
/// An empty variable counts as unset. Descriptions and the mirror never show the
/// database password or the shared secret.
public struct ServiceConfiguration: Equatable, Sendable {
    /// `IAP_LISTEN`: unset means the FastCGI socket is fd 0 (spawn-fcgi); a
    /// value containing "/" is a unix socket path; otherwise `host:port`.
    public var listen: ListenAddress
    /// `IAP_DB_HOST`, `IAP_DB_PORT`, `IAP_DB_SOCKET`, `IAP_DB_USER`,
    /// `IAP_DB_PASSWORD`, `IAP_DB_NAME`; see `DatabaseConfiguration`.
    public var database: DatabaseConfiguration
    /// `IAP_BUNDLE_IDS`, required: the bundle ids whose receipts are honoured,
    /// comma-separated (items trimmed, empty items dropped).
    public var bundleIDs: [String]
    /// `IAP_APPLE_PRODUCTION_URL`, default `https://buy.itunes.apple.com/verifyReceipt`.
    /// Must be https: TLS verification is always on.
    public var productionURL: String
    /// `IAP_APPLE_SANDBOX_URL`, default `https://sandbox.itunes.apple.com/verifyReceipt`.
    /// Must be https: TLS verification is always on.
    public var sandboxURL: String
    /// `IAP_CA_FILE`: a PEM bundle of the CAs trusted for Apple's endpoints.
    /// Default nil: the system CA bundle.
    public var caFile: String?
    /// `IAP_APPLE_ROOT_CA_FILE`: a PEM of the roots a StoreKit 2 JWS must chain
    /// to (it may hold several). Default nil: Apple Root CA - G3, compiled in.
    public var appleRootCAFile: String?
    /// `IAP_RECEIPT_VERIFIER`: `apple` (default), `local` or `server-api`;
    /// `server-api` needs the App Store Server API (`IAP_APPSTORE_*`).
    public var receiptVerifier: ReceiptVerifierMode
    /// `IAP_APPLE_RECEIPT_ROOT_FILE`: a PEM of the roots an app receipt checked
    /// here must chain to (it may hold several). Default nil: Apple Inc. Root
    /// CA, compiled in.
    public var appleReceiptRootFile: String?
    /// `IAP_APPLE_TIMEOUT_MS`: the limit on one receipt's whole conversation
    /// with Apple (every call, retry and switch, connections included; see
    /// `AppleRetryPolicy`), in milliseconds. Default 15000, allowed 100...120000.
    public var appleTimeoutMs: Int
    /// `IAP_SHARED_SECRET`: the App Store shared secret, sent as `password`.
    /// Default nil (unset or empty). Never logged.
    public var sharedSecret: String?
    /// `IAP_SANDBOX_POLICY`: `review` (default), `always` or `never`.
    public var sandboxPolicy: SandboxPolicy
    /// `IAP_VERIFY_QUEUE_LIMIT` (jobs, default 4096, 1...1000000) and
    /// `IAP_VERIFY_QUEUE_MIB` (MiB of receipts, default 64, 1...65536): what each
    /// queue of a verification may hold (see `QueueLimit`); a full one answers
    /// `retry_later` at once.
    public var verifyQueueLimit: QueueLimit
    /// `IAP_ACCEPT_THREADS`: threads accepting and serving FastCGI requests.
    /// Default 8, allowed 1...256.
    public var acceptThreads: Int
    /// `IAP_APPLE_MAX_CALLS`: calls to Apple under way at once, default 4096
    /// (1...65536). Further calls wait their turn: a bound on what a flood of
    /// requests can make us send to Apple.
    public var appleMaxCalls: Int
    /// `IAP_FCGI_ALLOWED_ADDRESSES`, else libfcgi's `FCGI_WEB_SERVER_ADDRS`: the IP
    /// addresses (comma-separated) FastCGI clients may connect from over TCP; a
    /// connection from any other is closed unanswered. Empty: any client. Required
    /// when the service listens on TCP anywhere but loopback (see `ListenAddress.isLoopback`).
    public var allowedClientAddresses: [IPAddress]
    /// `IAP_APPSTORE_*`: the App Store Server API; see `AppStoreServerAPIConfiguration`.
    public var appStore: AppStoreServerAPIConfiguration
    /// `IAP_WEBHOOK_URL`, `IAP_WEBHOOK_SECRET`: nil (the default) pushes no events; see `WebhookConfiguration`.
    public var webhook: WebhookConfiguration?
    /// `IAP_METRICS_LISTEN`, `IAP_LOG_FORMAT`; see `OperationsConfiguration`.
    public var operations: OperationsConfiguration
    /// `IAP_CONSUMPTION`: `on` (the default) answers refund requests; see `ConsumptionSetting`.
    public var consumption: ConsumptionSetting
    /// `IAP_CONSOLE_*`: nil (the default) serves no support console; see `ConsoleConfiguration`.
    public var console: ConsoleConfiguration? = nil
    /// `IAP_GOOGLE_PACKAGES`, `IAP_GOOGLE_SERVICE_ACCOUNT_FILE`, `IAP_GOOGLE_API_URL`,
    /// `IAP_GOOGLE_TIMEOUT_MS`: Google Play; see `GooglePlayConfiguration`.
    public var googlePlay = GooglePlayConfiguration()
    /// `IAP_GOOGLE_PUSH_*`: nil (the default) leaves `POST /v1/notifications/google` unconfigured; see `GooglePushConfiguration`.
    public var googlePush: GooglePushConfiguration? = nil

    public static let defaultProductionURL = "https://buy.itunes.apple.com/verifyReceipt"
    public static let defaultSandboxURL = "https://sandbox.itunes.apple.com/verifyReceipt"
    public static let defaultAppleTimeoutMs = 15000
    public static let appleTimeoutMsRange = 100...120_000
    public static let defaultAcceptThreads = 8
    public static let acceptThreadsRange = 1...256
    public static let defaultAppleMaxCalls = 4096
    public static let appleMaxCallsRange = 1...65536

    public init(
        listen: ListenAddress = .inheritedSocket,
        database: DatabaseConfiguration = DatabaseConfiguration(),
        bundleIDs: [String],
        productionURL: String = defaultProductionURL,
        sandboxURL: String = defaultSandboxURL,
        caFile: String? = nil,
        appleRootCAFile: String? = nil,
        receiptVerifier: ReceiptVerifierMode = .apple,
        appleReceiptRootFile: String? = nil,
        appleTimeoutMs: Int = defaultAppleTimeoutMs,
        sharedSecret: String? = nil,
        sandboxPolicy: SandboxPolicy = .review,
        verifyQueueLimit: QueueLimit = QueueLimit(),
        acceptThreads: Int = defaultAcceptThreads,
        appleMaxCalls: Int = defaultAppleMaxCalls,
        allowedClientAddresses: [IPAddress] = [],
        appStore: AppStoreServerAPIConfiguration = AppStoreServerAPIConfiguration(),
        webhook: WebhookConfiguration? = nil,
        operations: OperationsConfiguration = OperationsConfiguration(),
        consumption: ConsumptionSetting = .on
    ) {
        self.listen = listen
        self.database = database
        self.bundleIDs = bundleIDs
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.caFile = caFile
        self.appleRootCAFile = appleRootCAFile
        self.receiptVerifier = receiptVerifier
        self.appleReceiptRootFile = appleReceiptRootFile
        self.appleTimeoutMs = appleTimeoutMs
        self.sharedSecret = sharedSecret
        self.sandboxPolicy = sandboxPolicy
        self.verifyQueueLimit = verifyQueueLimit
        self.acceptThreads = acceptThreads
        self.appleMaxCalls = appleMaxCalls
        self.allowedClientAddresses = allowedClientAddresses
        self.appStore = appStore
        self.webhook = webhook
        self.operations = operations
        self.consumption = consumption
    }

    /// Reads and validates the environment (pass `ProcessInfo.processInfo.environment`).
    /// - Throws: the first bad variable, named in the error.
    public static func fromEnvironment(_ env: [String: String]) throws(ConfigurationError) -> ServiceConfiguration {
        let reader = EnvironmentReader(env)

        var listen = ListenAddress.inheritedSocket
        if let text = reader["IAP_LISTEN"] {
            guard let address = ListenAddress(text) else {
                throw .invalid(
                    "IAP_LISTEN",
                    "must be host:port (e.g. 127.0.0.1:9000) or a unix socket path containing \"/\""
                        + " of at most \(ListenAddress.maxUnixPathBytes) bytes",
                    got: text)
            }
            listen = address
        }

        let allowedClientAddresses = try reader.allowedClientAddresses()
        if case .tcp = listen, !listen.isLoopback, allowedClientAddresses.isEmpty {
            throw ConfigurationError(
                variable: "IAP_FCGI_ALLOWED_ADDRESSES",
                problem: "is required when IAP_LISTEN is a TCP address other than loopback (got \"\(listen)\"):"
                    + " the addresses of the nginx servers allowed to connect, comma-separated"
                    + " (libfcgi's FCGI_WEB_SERVER_ADDRS is read when it is unset)")
        }

        let database = try DatabaseConfiguration.fromEnvironment(env)

        let bundleIDs = (reader["IAP_BUNDLE_IDS"] ?? "")
            .split(separator: ",")
            .map { String($0.trimmingSpaces) }
            .filter { !$0.isEmpty }
        if bundleIDs.isEmpty {
            throw ConfigurationError(
                variable: "IAP_BUNDLE_IDS",
                problem: "is required: the app bundle ids to accept, comma-separated (e.g. com.example.game)")
        }

        let sharedSecret = reader["IAP_SHARED_SECRET"]
        if let secret = sharedSecret, secret.containsSpaceOrControl {
            throw .invalid(
                "IAP_SHARED_SECRET",
                "must not contain spaces, line breaks or control characters (Apple would answer 21004)",
                got: secret)
        }

        var sandboxPolicy = SandboxPolicy.review
        if let text = reader["IAP_SANDBOX_POLICY"] {
            guard let policy = SandboxPolicy(rawValue: text) else {
                throw .invalid(
                    "IAP_SANDBOX_POLICY",
                    "must be one of " + SandboxPolicy.allCases.map(\.rawValue).joined(separator: ", "),
                    got: text)
            }
            sandboxPolicy = policy
        }

        var receiptVerifier = ReceiptVerifierMode.apple
        if let text = reader["IAP_RECEIPT_VERIFIER"] {
            guard let mode = ReceiptVerifierMode(rawValue: text) else {
                throw .invalid(
                    "IAP_RECEIPT_VERIFIER",
                    "must be one of " + ReceiptVerifierMode.allCases.map(\.rawValue).joined(separator: ", "),
                    got: text)
            }
            receiptVerifier = mode
        }
        let appStore = try AppStoreServerAPIConfiguration.fromEnvironment(env)
        if receiptVerifier == .serverAPI, appStore.credentials == nil {
            throw ConfigurationError(
                variable: "IAP_RECEIPT_VERIFIER",
                problem: "server-api needs the App Store Server API: set IAP_APPSTORE_KEY_ID, IAP_APPSTORE_ISSUER_ID"
                    + " and IAP_APPSTORE_PRIVATE_KEY_FILE, or choose local")
        }

        let verifyQueueLimit = QueueLimit(
            jobs: try reader.integer(
                "IAP_VERIFY_QUEUE_LIMIT", default: QueueLimit.defaultJobs, in: QueueLimit.jobsRange,
                "must be a whole number of verifications from 1 to 1000000"),
            bytes: try reader.integer(
                "IAP_VERIFY_QUEUE_MIB", default: QueueLimit.defaultMiB, in: QueueLimit.mibRange,
                "must be a whole number of MiB from 1 to 65536") << 20)

        var configuration = ServiceConfiguration(
            listen: listen,
            database: database,
            bundleIDs: bundleIDs,
            productionURL: try reader.httpsURL("IAP_APPLE_PRODUCTION_URL", default: defaultProductionURL),
            sandboxURL: try reader.httpsURL("IAP_APPLE_SANDBOX_URL", default: defaultSandboxURL),
            caFile: reader["IAP_CA_FILE"],
            appleRootCAFile: reader["IAP_APPLE_ROOT_CA_FILE"],
            receiptVerifier: receiptVerifier,
            appleReceiptRootFile: reader["IAP_APPLE_RECEIPT_ROOT_FILE"],
            appleTimeoutMs: try reader.integer(
                "IAP_APPLE_TIMEOUT_MS", default: defaultAppleTimeoutMs, in: appleTimeoutMsRange,
                "must be a whole number of milliseconds from 100 to 120000"),
            sharedSecret: sharedSecret,
            sandboxPolicy: sandboxPolicy,
            verifyQueueLimit: verifyQueueLimit,
            acceptThreads: try reader.integer(
                "IAP_ACCEPT_THREADS", default: defaultAcceptThreads, in: acceptThreadsRange,
                "must be a whole number of threads from 1 to 256"),
            appleMaxCalls: try reader.integer(
                "IAP_APPLE_MAX_CALLS", default: defaultAppleMaxCalls, in: appleMaxCallsRange,
                "must be a whole number of calls from 1 to 65536"),
            allowedClientAddresses: allowedClientAddresses,
            appStore: appStore,
            webhook: try WebhookConfiguration.fromEnvironment(env),
            operations: try OperationsConfiguration.fromEnvironment(env),
            consumption: try ConsumptionSetting.fromEnvironment(reader))
        configuration.console = try ConsoleConfiguration.fromEnvironment(env, publicListen: listen)
        configuration.googlePlay = try GooglePlayConfiguration.fromEnvironment(env)
        configuration.googlePush = try GooglePushConfiguration.fromEnvironment(env)
        return configuration
    }

    /// The rule of `IAP_LISTEN` for a socket the service inherits (fd 0), whose
    /// address is known only once it runs: one listening on an IP address other
    /// than loopback needs allowed client addresses. `address` is nil for a unix socket.
    public func checkInheritedSocket(listeningOn address: IPAddress?) throws(ConfigurationError) {
        guard let address, !address.isLoopback, allowedClientAddresses.isEmpty else { return }
        throw ConfigurationError(
            variable: "IAP_FCGI_ALLOWED_ADDRESSES",
            problem: "is required: the inherited socket (fd 0) listens on \(address), not on loopback;"
                + " give the addresses of the nginx servers allowed to connect, comma-separated"
                + " (libfcgi's FCGI_WEB_SERVER_ADDRS is read when it is unset)")
    }
}

extension ServiceConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        let appStore = "appStore: \(self.appStore), webhook: \(webhook.map(\.description) ?? "<none>"), "
            + "metricsListen: \(operations.metricsListen?.description ?? "<none>"), logFormat: \(operations.logFormat.rawValue), "
            + "consumption: \(consumption.rawValue))"
        let receipts = "receiptVerifier: \(receiptVerifier.rawValue), "
            + "appleReceiptRootFile: \(appleReceiptRootFile ?? "<Apple Inc. Root CA>"), "
        return "ServiceConfiguration(listen: \(listen), database: \(database), bundleIDs: \(bundleIDs), "
            + "productionURL: \(productionURL), sandboxURL: \(sandboxURL), caFile: \(caFile ?? "<system>"), "
            + "appleRootCAFile: \(appleRootCAFile ?? "<Apple Root CA - G3>"), " + receipts
            + "appleTimeoutMs: \(appleTimeoutMs), sharedSecret: \(Redacted(sharedSecret)), "
            + "sandboxPolicy: \(sandboxPolicy.rawValue), "
            + "verifyQueueLimit: \(verifyQueueLimit.jobs) jobs, \(verifyQueueLimit.bytes >> 20) MiB, acceptThreads: \(acceptThreads), "
            + "appleMaxCalls: \(appleMaxCalls), allowedClientAddresses: \(allowedClientAddresses), "
            + appStore
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "listen": listen, "database": database, "bundleIDs": bundleIDs,
                "productionURL": productionURL, "sandboxURL": sandboxURL, "caFile": caFile as Any,
                "appleRootCAFile": appleRootCAFile as Any,
                "receiptVerifier": receiptVerifier, "appleReceiptRootFile": appleReceiptRootFile as Any,
                "appleTimeoutMs": appleTimeoutMs, "sharedSecret": Redacted(sharedSecret).description,
                "sandboxPolicy": sandboxPolicy, "verifyQueueLimit": verifyQueueLimit,
                "acceptThreads": acceptThreads, "appleMaxCalls": appleMaxCalls,
                "allowedClientAddresses": allowedClientAddresses,
                "appStore": appStore, "webhook": webhook.map(\.description) ?? "<none>", "operations": operations,
                "consumption": consumption,
            ])
    }
}

/// Reads variables with the conventions of `ServiceConfiguration`.
struct EnvironmentReader {
    let env: [String: String]

    init(_ env: [String: String]) {
        self.env = env
    }

    /// The value of `name`, or nil when it is unset or empty.
    subscript(name: String) -> String? {
        guard let value = env[name], !value.isEmpty else { return nil }
        return value
    }

    func integer(
        _ name: String, default defaultValue: Int, in range: ClosedRange<Int>, _ rule: String
    ) throws(ConfigurationError) -> Int {
        guard let text = self[name] else { return defaultValue }
        guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let value = Int(text), range.contains(value)
        else { throw .invalid(name, rule, got: text) }
        return value
    }

    /// `IAP_FCGI_ALLOWED_ADDRESSES`, or `FCGI_WEB_SERVER_ADDRS` when that is unset
    /// (the variable libfcgi reads for the same purpose): items trimmed, empty items dropped.
    func allowedClientAddresses() throws(ConfigurationError) -> [IPAddress] {
        let name = self["IAP_FCGI_ALLOWED_ADDRESSES"] != nil ? "IAP_FCGI_ALLOWED_ADDRESSES" : "FCGI_WEB_SERVER_ADDRS"
        guard let text = self[name] else { return [] }
        var addresses: [IPAddress] = []
        for item in text.split(separator: ",").map({ String($0.trimmingSpaces) }) where !item.isEmpty {
            guard let address = IPAddress(item) else {
                throw .invalid(name, "must be IP addresses separated by commas, e.g. 10.0.0.5,10.0.0.6", got: text)
            }
            addresses.append(address)
        }
        return addresses
    }

    func httpsURL(_ name: String, default defaultValue: String) throws(ConfigurationError) -> String {
        guard let text = self[name] else { return defaultValue }
        let lowercased = text.lowercased()
        if lowercased.hasPrefix("http://") {
            throw .invalid(
                name, "must be an https:// URL: TLS verification cannot be turned off, so http:// is refused",
                got: text)
        }
        guard lowercased.hasPrefix("https://"), text.utf8.count > "https://".utf8.count, !text.containsSpaceOrControl
        else {
            throw .invalid(name, "must be an https:// URL, e.g. \(defaultValue)", got: text)
        }
        return text
    }
}

extension StringProtocol {
    /// Without leading and trailing whitespace.
    var trimmingSpaces: SubSequence {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else { return self[endIndex...] }
        return self[first...last]
    }

    fileprivate var containsSpaceOrControl: Bool {
        unicodeScalars.contains { $0.properties.isWhitespace || $0.properties.generalCategory == .control }
    }
}
