import ArgumentParser
import IAPCore
import IAPService

/// `iapctl subscriptions sync [--user U | --all-stale]`: Get All Subscription
/// Statuses for those chains, and what Apple says applied (`SubscriptionSync`).
struct SubscriptionsSync: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Bring subscription chains up to date from Apple (Get All Subscription Statuses).",
        discussion: """
            Reads the same environment as iap-fcgi (IAP_APPSTORE_*, IAP_BUNDLE_IDS, IAP_CA_FILE, IAP_DB_*). --user U \
            asks about U's chains; --all-stale about every chain still active, in a grace period or in billing \
            retry past its expiry (what a server that missed notifications holds). Apple answers for every chain \
            of the customer at once. Each chain is applied as a change dated when Apple signed it: a notification \
            signed later still wins. Prints one tab-separated line per chain: original transaction id, status, \
            expires_at (UTC), and changed, unchanged, stale or why it was refused. Exits 1 when Apple does not \
            answer (what was applied stays). Written to staff_audit.
            """)

    @Option(help: "The player (user_id) whose chains to sync.")
    var user: String?

    @Flag(help: "Every chain past its expiry that is not expired or revoked here.")
    var allStale = false

    func validate() throws {
        guard (user != nil) != allStale else { throw ValidationError("give either --user U or --all-stale") }
        if let user, !UserID.isValid(user) {
            throw ValidationError("--user must be a user id of 1 to 64 characters without control characters")
        }
    }

    func run() throws {
        let configuration = try ServerAPIAccess.configuration()
        let connection = try AdminDatabase.connect()
        let sync = SubscriptionSync(
            AppleSyncContext(query: try ServerAPIAccess.query(), connection: connection, configuration: configuration))
        var results: [SubscriptionSync.ChainResult] = []
        var failure: AdminError?
        do {
            try sync.run(user.map(SubscriptionSync.Selection.user) ?? .allStale) { result in
                results.append(result)
                print(Self.line(result))
            }
        } catch let error as SubscriptionSync.Failure {
            failure = ServerAPIAccess.failure(error.error, notFound: "Apple does not know \(error.originalTransactionID)")
        }
        let changed = results.filter { $0.result == "changed" }.count
        let summary = "\(results.count) chains read, \(changed) changed" + (failure.map { "; stopped: \($0)" } ?? "")
        try StaffAudit(connection: connection, actor: .commandLine).record(
            .subscriptions(.sync), userID: user, target: user ?? "all-stale", result: summary)
        if let failure { throw failure }
        print(summary)
    }

    static func line(_ result: SubscriptionSync.ChainResult) -> String {
        [
            result.originalTransactionID, result.status?.rawValue ?? "-",
            result.expiresAt.map { AppleDate.iso8601(ms: $0) } ?? "-", result.result,
        ].joined(separator: "\t")
    }
}
