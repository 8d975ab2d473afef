import ArgumentParser
import Glibc
import IAPCore
import IAPService
import MariaDB
import SignedData

/// `iapctl status`: one screen for an operator. The version, whether the
/// database answers and its migrations against `sql/`, the settings, the
/// retry-pending backlog, failed events, the last notification, and when the
/// configured roots expire. Reads only; exits 1 when the database cannot be reached.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the version, database, migrations, settings, backlog, events, notifications and certificates.",
        discussion: "Reads IAP_DB_* and IAP_APPLE_ROOT_CA_FILE as iap-fcgi does.")

    @Option(help: ArgumentHelp(SQLDirectory.help))
    var sqlDir: String?

    /// Certificates expiring sooner than this are flagged.
    static let warningDays = 30.0

    func run() throws {
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        let nowMs = Int64(clock.tv_sec) * 1000 + Int64(clock.tv_nsec) / 1_000_000
        row("version", "iap-fcgi \(ServiceVersion.current)")
        row("time", AppleDate.iso8601(ms: nowMs))
        let reachable = databaseRows()
        certificateRows(nowMs: nowMs)
        if !reachable { throw ExitCode(1) }
    }

    private func row(_ name: String, _ value: String) {
        print(name.padding(toLength: 19, withPad: " ", startingAt: 0) + value)
    }

    /// The rows read from the database; false when it cannot be reached.
    private func databaseRows() -> Bool {
        let connection: MariaDBConnection
        do {
            connection = try AdminDatabase.connect()
        } catch {
            row("database", "UNREACHABLE: \(error)")
            return false
        }
        do {
            let server = try connection.execute("SELECT VERSION(), DATABASE()").first
            row("database", "reachable: \(server?[1] ?? "?") on MariaDB \(server?[0] ?? "?")")
            try migrationRow(connection)
            try settingsRows(connection)
            try backlogRow(connection)
            try eventsRow(connection)
            try notificationRow(connection)
        } catch {
            row("database", "ERROR: \(error)")
        }
        return true
    }

    private func migrationRow(_ connection: MariaDBConnection) throws {
        let sqlDir = SQLDirectory.resolve(sqlDir)
        let files = try? Migrate.files(in: sqlDir)
        guard try tableExists("schema_migrations", connection) else {
            return row("migrations", "none applied (no schema_migrations table); \(files?.count ?? 0) in \(sqlDir)/")
        }
        let applied = Set(try connection.execute("SELECT version FROM schema_migrations").rows.compactMap { $0[0] })
        row("migrations", MigrationStatus(applied: applied, files: files, directory: sqlDir).summary)
    }

    private func settingsRows(_ connection: MariaDBConnection) throws {
        let review = try Setting.read("review_version", connection)
        row("review_version", review.isEmpty ? "none (no version in App Review)" : review)
        let users = try Setting.read("sandbox_users", connection).split(separator: ",").count
        row("sandbox users", "\(users)")
    }

    private func backlogRow(_ connection: MariaDBConnection) throws {
        let waiting = try connection.execute(
            "SELECT COUNT(*), MIN(r.received_at) FROM receipts r WHERE \(PendingReceipts.backlogCondition)"
        ).first
        let gaveUp = try connection.execute(
            "SELECT COUNT(*) FROM receipts WHERE retry_final_state = ?", [.text("gave_up")]
        ).first?[0] ?? "0"
        let oldest = waiting?[1].map { ", oldest received \($0) UTC" } ?? ""
        row("retry-pending", "\(waiting?[0] ?? "0") receipts waiting\(oldest); \(gaveUp) given up")
    }

    private func eventsRow(_ connection: MariaDBConnection) throws {
        guard try tableExists("events", connection) else { return row("events", "no events table") }
        var counts: [String: String] = [:]
        for status in try connection.execute("SELECT status, COUNT(*) FROM events GROUP BY status").rows {
            if let name = status[0] { counts[name] = status[1] }
        }
        let failed = counts["failed"] ?? "0"
        row("failed events", "\(failed) failed, \(counts["pending"] ?? "0") pending, \(counts["sent"] ?? "0") sent")
    }

    private func notificationRow(_ connection: MariaDBConnection) throws {
        guard try tableExists("notifications", connection) else {
            return row("last notification", "no notifications table")
        }
        guard let last = try connection.execute(
            "SELECT notification_type, subtype, received_at FROM notifications ORDER BY received_at DESC LIMIT 1"
        ).first else {
            return row("last notification", "none received")
        }
        let type = [last[0], last[1]].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "/")
        row("last notification", "\(last[2] ?? "?") UTC, \(type)")
    }

    private func tableExists(_ name: String, _ connection: MariaDBConnection) throws -> Bool {
        try connection.execute(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
            [.text(name)]
        ).first?[0] == "1"
    }

    private func certificateRows(nowMs: Int64) {
        let roots: TrustedRoots
        let source: String
        if let path = ProcessEnvironment.variables()["IAP_APPLE_ROOT_CA_FILE"], !path.isEmpty {
            source = path
            do {
                roots = try TrustedRoots(pemFile: path)
            } catch {
                return row("root certificates", "UNREADABLE \(path): \(error)")
            }
        } else {
            source = "compiled in"
            roots = .apple
        }
        for (index, root) in roots.lifetimes.enumerated() {
            let days = root.daysLeft(nowMs: nowMs)
            let expiry = AppleDate.iso8601(ms: root.notValidAfterMs)
            let flag = days < 0 ? "EXPIRED " : days < Self.warningDays ? "EXPIRES SOON " : ""
            row(
                index == 0 ? "root certificates" : "",
                "\(flag)\(root.subject): expires \(expiry) (\(Int(days.rounded(.down))) days; \(source))")
        }
    }
}
