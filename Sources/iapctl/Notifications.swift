import ArgumentParser
import Glibc
import IAPCore
import IAPService

/// `iapctl notifications sync --since DATE`: the App Store Server Notifications
/// Apple sent while nothing took them (an outage past Apple's retries), from
/// Get Notification History, each applied as if Apple had sent it.
struct Notifications: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "App Store Server Notifications V2.", subcommands: [Sync.self])

    struct Sync: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store and apply every notification Apple sent since DATE that is not stored yet.",
            discussion: "Reads the same environment as iap-fcgi (IAP_APPSTORE_*, IAP_BUNDLE_IDS, IAP_CA_FILE,"
                + " IAP_SANDBOX_POLICY, IAP_DB_*). Idempotent: notifications already stored change nothing."
                + " Prints one line per notification applied, then a summary.")

        @Option(help: "UTC, YYYY-MM-DD or ISO 8601 (2026-11-24T06:00:00Z); at most 180 days back.")
        var since: String

        func run() throws {
            guard let sinceMs = NotificationSyncWindow.milliseconds(since: since) else {
                throw ValidationError("--since must be YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)")
            }
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let nowMs = Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
            if let problem = NotificationSyncWindow.problem(since: sinceMs, nowMs: nowMs) {
                throw ValidationError(problem)
            }
            let configuration: ServiceConfiguration
            do {
                configuration = try ServiceConfiguration.fromEnvironment(ProcessEnvironment.variables())
            } catch {
                throw ValidationError(error.description)
            }
            let sync = NotificationSync(AppleSyncContext(
                query: try ServerAPIAccess.query(), connection: try AdminDatabase.connect(), configuration: configuration))
            let summary: NotificationSync.Summary
            do {
                summary = try sync.run(sinceMs: sinceMs, untilMs: nowMs) { print($0) }
            } catch let failure as NotificationSync.Failure {
                throw ServerAPIAccess.failure(failure.error, notFound: "Apple has no notification history for us")
            }
            print("fetched \(summary.fetched), applied \(summary.applied), already stored \(summary.alreadyStored),"
                + " refused \(summary.refused)")
        }
    }
}
