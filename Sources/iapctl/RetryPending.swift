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

    @Option(help: ArgumentHelp(
        "Attempts after which a receipt is given up (reported, and kept in receipts.retry_final_state).",
        discussion: "Apple's 21000 and its internal errors without is-retryable are given up at once."))
    var maxAttempts = 10

    @Option(help: "Seconds before a receipt's second attempt; each further one waits twice as long, at most a day.")
    var backoff = 300

    func validate() throws {
        guard minimumAge >= 0 else { throw ValidationError("--minimum-age cannot be negative") }
        guard (1...100_000).contains(limit) else { throw ValidationError("--limit is 1 to 100000") }
        guard (1...1000).contains(maxAttempts) else { throw ValidationError("--max-attempts is 1 to 1000") }
        guard (0...PendingRetryPolicy.maxBackoffSeconds).contains(backoff) else {
            throw ValidationError("--backoff is 0 to \(PendingRetryPolicy.maxBackoffSeconds) seconds")
        }
    }

    func run() throws {
        let configuration: ServiceConfiguration
        do {
            configuration = try ServiceConfiguration.fromEnvironment(ProcessEnvironment.variables())
        } catch {
            throw ValidationError(error.description)
        }
        guard let summary = try PendingReceipts(configuration: configuration)
            .retry(
                minimumAgeSeconds: minimumAge, limit: limit,
                policy: PendingRetryPolicy(maxAttempts: maxAttempts, backoffSeconds: backoff))
        else {
            print("another retry-pending run is under way; nothing done")
            return
        }
        print(summary)
    }
}
