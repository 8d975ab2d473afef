import ArgumentParser
import IAPCore
import IAPService
import MariaDB

/// `iapctl subscriptions`: a player's auto-renewable subscription chains and what
/// they entitle to now; the chains brought up to date from Apple; renewal dates
/// extended to compensate players. Every run is written to `staff_audit` (staff
/// name `iapctl`).
struct Subscriptions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show, sync or extend auto-renewable subscriptions.",
        subcommands: [Show.self, SubscriptionsSync.self, SubscriptionsExtend.self, SubscriptionsExtendAll.self])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A player's subscription chains and their entitlement now.",
            discussion: """
                Prints one tab-separated line per chain (`subscriptions`), newest expiry first: original \
                transaction id, product, status (active, grace_period, billing_retry, expired, revoked), expires_at \
                (UTC), auto-renewal (on, off, - not known), environment, and the entitlement now (`entitlements`): \
                "entitled until <UTC>" or "not entitled". Exits 1 when the player has no chain.
                """)

        @Argument(help: "The player (user_id).")
        var user: String

        func validate() throws {
            guard UserID.isValid(user) else {
                throw ValidationError("USER must be a user id of 1 to 64 characters without control characters")
            }
        }

        func run() throws {
            let connection = try AdminDatabase.connect()
            let rows = try connection.execute(
                """
                SELECT s.original_transaction_id, s.product_id, s.status,
                       DATE_FORMAT(s.expires_at, '%Y-%m-%dT%H:%i:%SZ'),
                       CASE s.auto_renew WHEN 1 THEN 'on' WHEN 0 THEN 'off' ELSE '-' END, s.environment,
                       DATE_FORMAT(e.entitled_until, '%Y-%m-%dT%H:%i:%SZ')
                FROM subscriptions s
                LEFT JOIN entitlements e ON e.original_transaction_id = s.original_transaction_id
                WHERE s.user_id = ? ORDER BY s.expires_at DESC, s.original_transaction_id
                """, [.text(user)]
            ).rows
            try StaffAudit(connection: connection, actor: .commandLine).record(
                .subscriptions(.show), userID: user, target: user, result: "\(rows.count) chains shown")
            guard !rows.isEmpty else { throw AdminError("\(user) has no subscription chain here") }
            for row in rows {
                let entitlement = row[6].map { "entitled until \($0)" } ?? "not entitled"
                print((row.prefix(6).map { $0 ?? "-" } + [entitlement]).joined(separator: "\t"))
            }
        }
    }
}

/// What this database holds of one chain: whose it is and where it lives.
struct StoredChain {
    let userID: String?
    let environment: AppleEnvironment

    /// nil when `subscriptions` has no row for `originalTransactionID`.
    static func read(_ originalTransactionID: String, _ connection: MariaDBConnection) throws -> StoredChain? {
        guard let row = try connection.execute(
            "SELECT user_id, environment FROM subscriptions WHERE original_transaction_id = ?",
            [.text(originalTransactionID)]
        ).first else { return nil }
        return StoredChain(userID: row[0], environment: AppleEnvironment(rawValue: row[1] ?? "") ?? .production)
    }
}

/// The options an extension takes: days and reason, checked before anything is called
/// (`SubscriptionExtensionRequest`: 1 to 90 days, a reason code 0 to 3).
struct ExtensionOptions: ParsableArguments {
    @Option(help: "Days to push the renewal date back: 1 to 90.")
    var days: Int

    @Option(help: "0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.")
    var reason: Int

    @Option(help: "Production or Sandbox (default: the chain's, else Production).")
    var environment: String?

    func validate() throws {
        _ = try request(identifier: "check")
        if let environment, AppleEnvironment(rawValue: environment) == nil {
            throw ValidationError("--environment is Production or Sandbox")
        }
    }

    /// The request, named by `identifier`.
    func request(identifier: String) throws -> SubscriptionExtensionRequest {
        do {
            return try SubscriptionExtensionRequest(days: days, reasonCode: reason, requestIdentifier: identifier)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// What the audit row says was asked.
    var asked: String { "\(days) days, reason \(reason)" }
}
