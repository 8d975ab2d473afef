import IAPCore
import MariaDB

/// The `settings` table (iap-fcgi reads it within 5 seconds of a change):
/// written by `iapctl review-version`, `iapctl sandbox-users` and the console's
/// admins, through these functions.
public enum Setting {
    public static func read(_ name: String, _ connection: MariaDBConnection) throws -> String {
        try connection.execute("SELECT value FROM settings WHERE name = ?", [.text(name)]).first?[0] ?? ""
    }

    public static func write(_ name: String, _ value: String, _ connection: MariaDBConnection) throws {
        try connection.execute(
            "INSERT INTO settings (name, value) VALUES (?, ?) ON DUPLICATE KEY UPDATE value = VALUES(value)",
            [.text(name), .text(value)])
    }

    /// Why `version` cannot be the review version, nil when it can (clearing it is not setting it).
    public static func reviewVersionProblem(_ version: String) -> String? {
        if version.isEmpty || version.count > 32 || !version.allSatisfy({ $0.isASCII && !$0.isWhitespace }) {
            return "a version is 1 to 32 printable ASCII characters, e.g. 1.3.0"
        }
        if ReviewVersionRule.isPlaceholder(version) {
            return "\(version) looks like a placeholder, and any sandbox tester can send it as app_version "
                + "(GET /v1/version publishes it): to leave review, clear it (`iapctl review-version --clear`)"
        }
        return nil
    }

    /// Why `userID` cannot be a sandbox user, nil when it can.
    public static func sandboxUserProblem(_ userID: String) -> String? {
        if userID.isEmpty { return "a sandbox user needs a user id" }
        if userID.contains(",") { return "a user id cannot contain a comma" }
        return nil
    }

    /// The sandbox users, in order.
    public static func sandboxUsers(_ connection: MariaDBConnection) throws -> [String] {
        try read("sandbox_users", connection).split(separator: ",").map(String.init)
    }

    public static func writeSandboxUsers(_ users: [String], _ connection: MariaDBConnection) throws {
        try write("sandbox_users", users.joined(separator: ","), connection)
    }
}
