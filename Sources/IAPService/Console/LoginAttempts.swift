import IAPCore
import MariaDB

/// Failed console logins (`staff_login_failures`, the last `windowSeconds`):
/// `LoginThrottle` decides from their counts, per name and address, per name
/// and per address.
struct LoginAttempts {
    let connection: MariaDBConnection
    let throttle: LoginThrottle

    /// Whether `name` may try to log in from `address` now.
    func decision(name: String, address: String) throws -> LoginThrottle.Decision {
        let window: SQLValue = .integer(Int64(throttle.windowSeconds))
        let row = try connection.execute(
            """
            SELECT
              (SELECT COUNT(*) FROM staff_login_failures WHERE name = ? AND client_ip = ?
                 AND failed_at > UTC_TIMESTAMP(3) - INTERVAL ? SECOND),
              named.failures, TIMESTAMPDIFF(MICROSECOND, named.newest, UTC_TIMESTAMP(3)) DIV 1000,
              addressed.failures, TIMESTAMPDIFF(MICROSECOND, addressed.newest, UTC_TIMESTAMP(3)) DIV 1000
            FROM
              (SELECT COUNT(*) AS failures, MAX(failed_at) AS newest FROM staff_login_failures
                 WHERE name = ? AND failed_at > UTC_TIMESTAMP(3) - INTERVAL ? SECOND) named,
              (SELECT COUNT(*) AS failures, MAX(failed_at) AS newest FROM staff_login_failures
                 WHERE client_ip = ? AND failed_at > UTC_TIMESTAMP(3) - INTERVAL ? SECOND) addressed
            """,
            [.text(Self.stored(name)), .asciiBytes(address), window, .text(Self.stored(name)), window,
             .asciiBytes(address), window]
        ).first
        func count(_ index: Int) -> Int { row?[index].flatMap { Int($0) } ?? 0 }
        func ms(_ index: Int) -> Int64? { row?[index].flatMap { Int64($0) } }
        return throttle.decide(
            LoginThrottle.Failures(
                ofNameFromAddress: count(0), ofName: count(1), msSinceNameFailure: ms(2), fromAddress: count(3),
                msSinceAddressFailure: ms(4)))
    }

    func recordFailure(name: String, address: String) throws {
        try connection.execute(
            "INSERT INTO staff_login_failures (name, client_ip, failed_at) VALUES (?, ?, UTC_TIMESTAMP(3))",
            [.text(Self.stored(name)), .asciiBytes(address)])
        try connection.execute(
            "DELETE FROM staff_login_failures WHERE failed_at < UTC_TIMESTAMP(3) - INTERVAL ? SECOND",
            [.integer(Int64(throttle.windowSeconds))])
    }

    /// A successful login forgets the name's failures from its address; those from elsewhere (someone
    /// else guessing) keep their lock and their delay.
    func recordSuccess(name: String, address: String) throws {
        try connection.execute(
            "DELETE FROM staff_login_failures WHERE name = ? AND client_ip = ?", [.text(Self.stored(name)), .asciiBytes(address)])
    }

    /// Forgets the name's failures from every address; returns how many there were.
    @discardableResult
    func forget(name: String) throws -> Int {
        Int(try connection.execute("DELETE FROM staff_login_failures WHERE name = ?", [.text(Self.stored(name))]).affectedRows)
    }

    /// The column holds 64 characters: a longer name tried is counted under its first 64.
    private static func stored(_ name: String) -> String { String(name.prefix(64)) }
}
