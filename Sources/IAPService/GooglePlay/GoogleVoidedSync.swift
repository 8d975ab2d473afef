import IAPCore
import MariaDB

/// `iapctl google voided-sync`: every voided purchase Google lists for each
/// configured package, applied as its notification would be
/// (`GoogleVoidedPurchaseLedger`), each in a database transaction of its own.
/// What was applied before changes nothing, so runs may overlap.
public struct GoogleVoidedSync {
    /// What a run found, for the operator.
    public struct Summary: Sendable {
        public var listed = 0
        /// Refunded in whole or in part by this run.
        public var applied = 0
        /// Applied before (by a push or an earlier run), or nothing left to refund.
        public var unchanged = 0
        /// Naming a purchase this database does not hold.
        public var notHere = 0
    }

    /// Google did not list a package's voided purchases: the run stops there (what it applied stays applied).
    public struct Failure: Error, CustomStringConvertible {
        public let packageName: String
        public let reason: String

        public var description: String {
            "Google's voided purchases of \(packageName) could not be read: \(reason)"
        }
    }

    private let query: GooglePlayQuery
    private let connection: MariaDBConnection

    public init(query: GooglePlayQuery, connection: MariaDBConnection) {
        self.query = query
        self.connection = connection
    }

    /// Where a run from `since` (nil: as far back as Google lists) starts, now; or why it cannot.
    public static func startTime(since: Int64?) -> Result<Int64, GoogleVoidedWindow.SyncWindowProblem> {
        GoogleVoidedWindow.syncStart(since: since, nowMs: SystemClock.wallMilliseconds())
    }

    /// Every voided purchase from `startTimeMs` on (at most 30 days back: `GoogleVoidedWindow`);
    /// `log` gets one line for each one that changed something or names a purchase not here.
    /// - Throws: `Failure` when Google did not answer; the database's error.
    public func run(startTimeMs: Int64, log: (String) -> Void) throws -> Summary {
        let reader = GoogleVoidedPurchaseReader(client: query.client)
        let ledger = GoogleVoidedPurchaseLedger(connection: connection)
        var summary = Summary()
        try query.whileRunning {
            for packageName in query.packages {
                let voided: [GoogleVoidedPurchase]
                switch reader.all(packageName: packageName, startTimeMs: startTimeMs) {
                case .failure(let unavailable):
                    throw Failure(packageName: packageName, reason: unavailable.description)
                case .success(let list):
                    voided = list
                }
                for purchase in voided {
                    summary.listed += 1
                    let outcome = try connection.transactionRetryingDeadlocks(attempts: NotificationApplier.attempts) {
                        try ledger.apply(purchase, packageName: packageName, at: .now())
                    }
                    switch outcome {
                    case .notHere: summary.notHere += 1
                    case .alreadyApplied, .applied(_, _, .unchanged): summary.unchanged += 1
                    case .applied: summary.applied += 1
                    }
                    if let line = Self.line(purchase, outcome) { log(line) }
                }
            }
        }
        return summary
    }

    /// What the operator reads of one voided purchase; nil when it changed nothing.
    static func line(_ voided: GoogleVoidedPurchase, _ outcome: GoogleVoidedPurchaseLedger.Outcome) -> String? {
        let when = AppleDate.iso8601(ms: voided.voidedTimeMilliseconds)
        switch outcome {
        case .notHere:
            let name = voided.orderID ?? "token " + GoogleTransactionID.tokenSHA256(voided.purchaseToken).prefix(16)
            return "\(name): voided \(when), not here"
        case .alreadyApplied, .applied(_, _, .unchanged):
            return nil
        case .applied(let transactionID, let quantity, .part(let refunded, let takesBack)):
            return "\(transactionID): \(refunded) of \(quantity) refunded \(when)" + (takesBack ? "" : " (never delivered)")
        case .applied(let transactionID, let quantity, .whole(let takesBack, let refunded)):
            let what = refunded.map { "the last \($0) of \(quantity) refunded" } ?? "refunded"
            return "\(transactionID): \(what) \(when)" + (takesBack ? "" : " (never delivered)")
        }
    }
}
