import MariaDB

/// The `settings` table (iap-fcgi reads it within 5 seconds of a change).
enum Setting {
    static func read(_ name: String, _ connection: MariaDBConnection) throws -> String {
        try connection.execute("SELECT value FROM settings WHERE name = ?", [.text(name)]).first?[0] ?? ""
    }

    static func write(_ name: String, _ value: String, _ connection: MariaDBConnection) throws {
        try connection.execute(
            "INSERT INTO settings (name, value) VALUES (?, ?) ON DUPLICATE KEY UPDATE value = VALUES(value)",
            [.text(name), .text(value)])
    }
}
