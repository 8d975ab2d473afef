import ArgumentParser
import IAPCore
import IAPService

/// `iapctl retry-pending`: verifies again the receipts whose Apple call never
/// completed and delivers what they hold. Run it from cron with the service's
/// own environment (it calls Apple as the service does).
struct RetryPending: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry-pending",
        abstract: "Finish verifications that never completed (Apple or the database was down).",
        discussion: "Reads the same environment as iap-fcgi (IAP_BUNDLE_IDS, IAP_APPLE_*, IAP_CA_FILE, IAP_DB_*). "
            + "Safe to run from cron while the service runs.")

    @Option(help: "Leave receipts younger than this many seconds to the requests that may still be on them.")
    var minimumAge = 300

    @Option(help: "The most receipts one run takes.")
    var limit = 1000

    func validate() throws {
        guard minimumAge >= 0 else { throw ValidationError("--minimum-age cannot be negative") }
        guard (1...100_000).contains(limit) else { throw ValidationError("--limit is 1 to 100000") }
    }

    func run() throws {
        let configuration: ServiceConfiguration
        do {
            configuration = try ServiceConfiguration.fromEnvironment(ProcessEnvironment.variables())
        } catch {
            throw ValidationError(error.description)
        }
        guard let summary = try PendingReceipts(configuration: configuration)
            .retry(minimumAgeSeconds: minimumAge, limit: limit)
        else {
            print("another retry-pending run is under way; nothing done")
            return
        }
        print(summary)
    }
}
