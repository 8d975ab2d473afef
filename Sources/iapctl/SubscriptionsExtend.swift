import ArgumentParser
import Glibc
import IAPCore
import IAPService

/// `iapctl subscriptions extend ORIGINAL_ID --days N --reason CODE`: Extend a
/// Subscription Renewal Date for one chain (`SubscriptionExtension`, the call the
/// console's admins make too), audited with what Apple answered.
struct SubscriptionsExtend: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extend",
        abstract: "Push one subscription's renewal date back (Apple's Extend a Subscription Renewal Date).",
        discussion: """
            Reads the same environment as iap-fcgi (IAP_APPSTORE_*, IAP_BUNDLE_IDS, IAP_CA_FILE, IAP_DB_*). Apple \
            takes 1 to 90 days and extends a subscription at most twice in 365 days, only while it is active; \
            days or a reason out of range are refused here, before Apple is called. On success prints the chain, \
            "extended" and its new expiry (UTC), and brings the chain's row up to date from Apple (as `sync` does). \
            Exits 1 when Apple refuses (the reason is printed) or does not answer. Written to staff_audit.
            """)

    @Argument(help: "The chain's original transaction id.")
    var originalTransactionID: String

    @OptionGroup var options: ExtensionOptions

    func validate() throws {
        guard AppleTransactionID.isValid(originalTransactionID) else {
            throw ValidationError("ORIGINAL_ID must be an original transaction id (1 to 64 digits)")
        }
    }

    func run() throws {
        let request = try options.request(identifier: SubscriptionExtensionRequest.newRequestIdentifier())
        let connection = try AdminDatabase.connect()
        let stored = try StoredChain.read(originalTransactionID, connection)
        let environment = options.environment.flatMap(AppleEnvironment.init(rawValue:)) ?? stored?.environment
            ?? .production
        let configuration = try ServerAPIAccess.configuration()
        let query = try ServerAPIAccess.query()
        let outcome = query.withSubscriptionCalls(appleTimeoutMs: configuration.appleTimeoutMs) {
            $0.extend(originalTransactionID: originalTransactionID, environment: environment, request: request)
        }
        try StaffAudit(connection: connection, actor: .commandLine).record(
            .subscriptions(.extend), userID: stored?.userID, target: originalTransactionID,
            result: "\(options.asked) (\(environment.rawValue), request \(request.requestIdentifier)): \(outcome)")
        guard case .extended(let effectiveDate) = outcome else { throw AdminError("\(originalTransactionID) \(outcome)") }
        print("\(originalTransactionID)\textended\t\(AppleDate.iso8601(ms: effectiveDate))")
        guard stored != nil else { return }
        let sync = SubscriptionSync(
            AppleSyncContext(query: try ServerAPIAccess.query(), connection: connection, configuration: configuration))
        do {
            try sync.run(.chain(originalTransactionID)) { print(SubscriptionsSync.line($0)) }
        } catch let error as SubscriptionSync.Failure {
            throw AdminError("extended at Apple, but the chain here was not brought up to date (\(error.error));"
                + " run `iapctl subscriptions sync` later, or wait for Apple's RENEWAL_EXTENDED notification")
        }
    }
}

/// `iapctl subscriptions extend-all PRODUCT --days N --reason CODE`: Extend
/// Subscription Renewal Dates for All Active Subscribers of a product (an
/// outage's compensation), then its status polled until Apple says it is complete
/// or the wait ends. Audited when requested and when done.
struct SubscriptionsExtendAll: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extend-all",
        abstract: "Push every active subscriber's renewal date back for a product (Apple's mass extension).",
        discussion: """
            Reads the same environment as iap-fcgi. Days and reason are checked as for `extend` before Apple is \
            called. Prints the request identifier, then one line per status poll ("in progress"), and at the end \
            "complete" with how many subscriptions Apple extended and how many it could not (those extended \
            twice in 365 days already, say). Apple may take hours: when --wait passes first, exits 1 and prints \
            how to poll again with --request-id. Written to staff_audit (the request, and its outcome).
            """)

    @Argument(help: "The product id of the subscription.")
    var product: String

    @OptionGroup var options: ExtensionOptions

    @Option(help: "Seconds between status polls (at least 1).")
    var pollSeconds = 30

    @Option(help: "Seconds to poll before giving up (the extension goes on at Apple).")
    var wait = 3600

    @Option(help: "Poll an extension requested earlier (its identifier) instead of requesting one.")
    var requestID: String?

    func validate() throws {
        guard pollSeconds >= 1, wait >= 0 else { throw ValidationError("--poll-seconds is at least 1, --wait at least 0") }
        let request = try options.request(identifier: requestID ?? "check")
        do { _ = try request.massBody(productID: product) } catch { throw ValidationError(error.description) }
    }

    func run() throws {
        let request = try options.request(identifier: requestID ?? SubscriptionExtensionRequest.newRequestIdentifier())
        let environment = options.environment.flatMap(AppleEnvironment.init(rawValue:)) ?? .production
        let configuration = try ServerAPIAccess.configuration()
        let query = try ServerAPIAccess.query()
        let audit = StaffAudit(connection: try AdminDatabase.connect(), actor: .commandLine)
        let target = "\(product) \(request.requestIdentifier)"
        let asked = "\(options.asked) (\(environment.rawValue))"
        let status = try query.withSubscriptionCalls(appleTimeoutMs: configuration.appleTimeoutMs) { calls in
            if requestID == nil {
                let outcome = calls.requestMassExtension(productID: product, environment: environment, request: request)
                try audit.record(.subscriptions(.extendAll), target: target, result: "\(asked): \(outcome)")
                guard outcome == .massAccepted else { throw AdminError("\(product) \(outcome)") }
            }
            print("\(request.requestIdentifier)\trequested")
            return try poll(calls, request, environment, audit: audit, target: target)
        }
        let result = "complete: \(status.succeededCount ?? 0) extended, \(status.failedCount ?? 0) not extended"
        try audit.record(.subscriptions(.extendAll), target: target, result: "\(asked): \(result)")
        print("\(request.requestIdentifier)\tcomplete\t\(status.succeededCount ?? 0) extended"
            + "\t\(status.failedCount ?? 0) not extended")
    }

    /// The status polled every --poll-seconds until complete, or an error once --wait has passed.
    private func poll(
        _ calls: SubscriptionExtension, _ request: SubscriptionExtensionRequest, _ environment: AppleEnvironment,
        audit: StaffAudit, target: String
    ) throws -> MassExtensionStatus {
        let giveUpAt = Self.monotonicSeconds() + wait
        while true {
            switch calls.massStatus(productID: product, environment: environment, request: request) {
            case .success(let status) where status.complete:
                return status
            case .success:
                print("\(request.requestIdentifier)\tin progress")
            case .failure(let failure):
                throw AdminError("\(product) \(request.requestIdentifier): status \(failure.outcome)")
            }
            guard Self.monotonicSeconds() + pollSeconds <= giveUpAt else {
                try audit.record(.subscriptions(.extendAll), target: target, result: "still in progress after \(wait) s")
                throw AdminError(
                    "Apple has not finished after \(wait) s; the extension goes on. Poll again with"
                        + " `iapctl subscriptions extend-all \(product) --days \(options.days) --reason \(options.reason)"
                        + " --request-id \(request.requestIdentifier)`")
            }
            sleep(UInt32(pollSeconds))
        }
    }

    private static func monotonicSeconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec
    }
}
