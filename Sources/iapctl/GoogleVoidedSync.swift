import ArgumentParser
import IAPCore
import IAPService

extension Google {
    /// `iapctl google voided-sync [--since DATE]`: the refunds, chargebacks and
    /// revocations Google Play lists (voided purchases), each applied as its
    /// voidedPurchaseNotification would be; how refunds arrive where no Pub/Sub
    /// push is set up (`iap-google-voided-sync.timer` runs it every hour).
    struct VoidedSync: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "voided-sync",
            abstract: "Apply every voided purchase Google Play lists since DATE that is not applied yet.",
            discussion: "Reads the same environment as iap-fcgi (IAP_GOOGLE_PACKAGES, IAP_GOOGLE_SERVICE_ACCOUNT_FILE,"
                + " IAP_GOOGLE_API_URL, IAP_CA_FILE, IAP_DB_*). Idempotent: a voided purchase applied before changes"
                + " nothing. Prints one line per purchase refunded (in whole or in part) or not held here, then a summary.")

        @Option(help: "UTC, YYYY-MM-DD or ISO 8601 (2026-11-24T06:00:00Z); at most 30 days back (the default: all Google lists).")
        var since: String?

        func run() throws {
            var sinceMs: Int64?
            if let since {
                guard let parsed = NotificationSyncWindow.milliseconds(since: since) else {
                    throw ValidationError("--since must be YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)")
                }
                sinceMs = parsed
            }
            let startTimeMs: Int64
            switch GoogleVoidedSync.startTime(since: sinceMs) {
            case .success(let start): startTimeMs = start
            case .failure(let problem): throw ValidationError(problem.description)
            }
            let sync = GoogleVoidedSync(query: try Google.query(), connection: try AdminDatabase.connect())
            let summary: GoogleVoidedSync.Summary
            do {
                summary = try sync.run(startTimeMs: startTimeMs) { print($0) }
            } catch let failure as GoogleVoidedSync.Failure {
                throw AdminError(failure.description)
            }
            print("listed \(summary.listed), applied \(summary.applied), unchanged \(summary.unchanged),"
                + " not here \(summary.notHere)")
        }
    }
}
