import IAPCore
import MariaDB
internal import SignedData

/// `iapctl subscriptions sync` (docs/iapctl.md): Get All Subscription Statuses
/// for chains this database holds, and what Apple says of each chain of the
/// customer applied through `SubscriptionStore`, as a change dated when Apple
/// signed it (`SubscriptionChange.statusRead`): a notification signed later
/// still wins, an older state changes nothing. It catches up chains whose
/// notifications never arrived (a server down for a week), and shows a renewal
/// date extended at Apple. One call per customer: the chains Apple returns
/// together are not asked about again.
public struct SubscriptionSync {
    /// Which chains to ask Apple about.
    public enum Selection: Sendable {
        /// Every chain of this user.
        case user(String)
        /// Every chain whose state here may have gone stale: active, in a grace period or in billing retry,
        /// past its expiry (or its grace period's end) with nothing newer heard.
        case allStale
        /// One chain.
        case chain(String)
    }

    /// What became of one chain Apple returned.
    public struct ChainResult: Sendable {
        public let originalTransactionID: String
        /// The chain's status here afterwards (`subscriptions.status`); nil when it was not applied.
        public let status: SubscriptionStatus?
        /// Its expiry afterwards, ms since 1970 UTC.
        public let expiresAt: Int64?
        /// `changed` (its status, expiry or auto-renewal: the game is told), `unchanged`, `stale` (Apple's state
        /// is older than what is stored), or why it was refused.
        public let result: String
    }

    /// Apple did not answer about a chain: the run stops there (what it applied stays applied).
    public struct Failure: Error {
        public let originalTransactionID: String
        public let error: AppStoreServerError
    }

    private let context: AppleSyncContext

    public init(_ context: AppleSyncContext) {
        self.context = context
    }

    /// Asks Apple about the chains `selection` names and applies what it says; `report` gets each chain
    /// Apple returned as it is applied.
    /// - Throws: `Failure` when Apple does not answer; the database's error.
    public func run(_ selection: Selection, report: (ChainResult) -> Void) throws {
        let asked = try chains(selection)
        var done = Set<String>()
        try context.query.withSubscriptionCalls(appleTimeoutMs: context.configuration.appleTimeoutMs) { calls in
            for chain in asked where !done.contains(chain.originalTransactionID) {
                switch calls.statuses(transactionID: chain.originalTransactionID, environment: chain.environment) {
                case .success(let reply):
                    for item in reply.chains where !done.contains(item.originalTransactionID) {
                        done.insert(item.originalTransactionID)
                        report(try apply(item))
                    }
                case .failure(.notFound):
                    done.insert(chain.originalTransactionID)
                    report(ChainResult(
                        originalTransactionID: chain.originalTransactionID, status: nil, expiresAt: nil,
                        result: "Apple does not know it in \(chain.environment.rawValue)"))
                case .failure(let error):
                    throw Failure(originalTransactionID: chain.originalTransactionID, error: error)
                }
            }
        }
    }

    private struct Asked {
        let originalTransactionID: String
        let environment: AppleEnvironment
    }

    private func chains(_ selection: Selection) throws -> [Asked] {
        let sql: String
        let parameters: [SQLValue]
        switch selection {
        case .user(let userID):
            sql = "WHERE user_id = ? ORDER BY original_transaction_id"
            parameters = [.text(userID)]
        case .allStale:
            sql = """
                WHERE status IN ('active', 'grace_period', 'billing_retry')
                  AND GREATEST(expires_at, COALESCE(grace_period_expires_at, expires_at)) < UTC_TIMESTAMP(3)
                ORDER BY expires_at, original_transaction_id
                """
            parameters = []
        case .chain(let id):
            sql = "WHERE original_transaction_id = ?"
            parameters = [.text(id)]
        }
        return try context.connection.execute("SELECT original_transaction_id, environment FROM subscriptions " + sql, parameters)
            .rows.compactMap { row in
                guard let id = row[0] else { return nil }
                return Asked(originalTransactionID: id, environment: AppleEnvironment(rawValue: row[1] ?? "") ?? .production)
            }
    }

    /// One chain of Apple's answer, verified and applied in a database transaction of its own.
    private func apply(_ item: SubscriptionStatusesReply.Chain) throws -> ChainResult {
        func refused(_ why: String) -> ChainResult {
            ChainResult(originalTransactionID: item.originalTransactionID, status: nil, expiresAt: nil, result: "refused: \(why)")
        }
        guard let status = item.status else { return refused("Apple's status \(item.appleStatus) is not one we know") }
        let verified: VerifiedSignedTransaction
        var renewalInfo: RenewalInfo?
        do {
            verified = try context.query.verifier.verifiedTransaction(item.signedTransactionInfo)
            if let renewal = item.signedRenewalInfo {
                renewalInfo = try context.query.verifier.verifyRenewalInfo(Array(renewal.utf8)).info
            }
        } catch {
            return refused("a signed field did not verify (\(error.rawValue))")
        }
        let transaction = verified.transaction
        guard context.configuration.bundleIDs.contains(transaction.bundleID) else {
            return refused("bundle id \(transaction.bundleID.prefix(64)) is not configured")
        }
        let environment = NotifiedTransactionStore.environment(of: transaction).rawValue
        guard let period = SubscriptionPeriod(transaction: transaction.appleTransaction(raw: verified.raw), environment: environment),
              period.originalTransactionID == item.originalTransactionID
        else { return refused("its transaction is not a period of this chain") }
        let change = SubscriptionChange.statusRead(
            status, period: period, renewalInfo: renewalInfo, transactionSignedDate: transaction.signedDate)
        let store = SubscriptionStore(connection: context.connection)
        return try context.connection.transactionRetryingDeadlocks(attempts: 3) {
            let now = Timestamp.now()
            _ = try SubscriptionRenewals(connection: context.connection).deliver(transaction, raw: verified.raw, at: now)
            let outcome = try store.apply([change], at: now)
            let after = try store.locked(item.originalTransactionID)?.state
            let result: String
            switch outcome {
            // Only what the game sees counts: each read is signed anew, so its date alone moves.
            case .changed(_, notifiesGame: true)?: result = "changed"
            case .stale?: result = "stale"
            case .changed(_, notifiesGame: false)?, .unchanged?, .noChain?, nil: result = "unchanged"
            }
            return ChainResult(
                originalTransactionID: item.originalTransactionID, status: after?.status, expiresAt: after?.expiresAt,
                result: result)
        }
    }
}
