import IAPCore
import MariaDB

/// The `staff` table: accounts of the support console, written by `iapctl
/// staff` and by admins in the console, through this one type. Every change
/// is written to `staff_audit` in its own database transaction.
public struct StaffStore {
    public struct Account: Sendable {
        public let staffID: Int64
        public let name: String
        public let role: StaffRole
        public let passwordHash: String
        public let disabled: Bool
    }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case invalidName, weakPassword, exists, noSuchAccount

        public var description: String {
            switch self {
            case .invalidName: return "a staff name is 1 to 64 letters, digits, dots, dashes or underscores"
            case .weakPassword: return "a password has at least \(StaffName.minimumPasswordLength) characters"
            case .exists: return "a staff account of that name exists"
            case .noSuchAccount: return "no staff account of that name"
            }
        }
    }

    let connection: MariaDBConnection

    public init(connection: MariaDBConnection) {
        self.connection = connection
    }

    public func account(named name: String) throws -> Account? {
        try connection.execute(
            "SELECT staff_id, name, role, password_hash, disabled_at IS NOT NULL FROM staff WHERE name = ?", [.text(name)]
        ).first.flatMap(Self.account)
    }

    public func all() throws -> [Account] {
        try connection.execute(
            "SELECT staff_id, name, role, password_hash, disabled_at IS NOT NULL FROM staff ORDER BY name"
        ).rows.compactMap(Self.account)
    }

    /// Adds an account, audited in the same transaction; returns what was done.
    @discardableResult
    public func add(name: String, role: StaffRole, password: String, by actor: StaffAudit.Actor) throws -> String {
        guard StaffName.isValid(name) else { throw Failure.invalidName }
        guard password.count >= StaffName.minimumPasswordLength else { throw Failure.weakPassword }
        let hash = StaffPassword.hash(password)
        return try connection.transaction {
            guard try account(named: name) == nil else { throw Failure.exists }
            try connection.execute(
                """
                INSERT INTO staff (name, role, password_hash, created_at, password_changed_at)
                VALUES (?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))
                """,
                [.text(name), .text(role.rawValue), .text(hash)])
            let result = "staff \(name) added as \(role.rawValue)"
            try StaffAudit(connection: connection, actor: actor).record(.console(.staffAdd), target: name, result: result)
            return result
        }
    }

    /// Sets a new password (and enables the account); its sessions end.
    @discardableResult
    public func setPassword(name: String, password: String, by actor: StaffAudit.Actor) throws -> String {
        guard password.count >= StaffName.minimumPasswordLength else { throw Failure.weakPassword }
        return try changeAccount(
            name, .passwordSet, "staff \(name) password set", by: actor,
            "UPDATE staff SET password_hash = ?, disabled_at = NULL, password_changed_at = UTC_TIMESTAMP(3) WHERE name = ?",
            [.text(StaffPassword.hash(password)), .text(name)])
    }

    /// Disables the account; its sessions end at once.
    @discardableResult
    public func disable(name: String, by actor: StaffAudit.Actor) throws -> String {
        try changeAccount(
            name, .console(.staffDisable), "staff \(name) disabled", by: actor,
            "UPDATE staff SET disabled_at = COALESCE(disabled_at, UTC_TIMESTAMP(3)) WHERE name = ?", [.text(name)])
    }

    /// Forgets the account's failed logins from every address: the locks they made end, and its logins are
    /// no longer slowed.
    @discardableResult
    public func unlock(name: String, by actor: StaffAudit.Actor) throws -> String {
        try connection.transaction {
            guard try account(named: name) != nil else { throw Failure.noSuchAccount }
            let forgotten = try LoginAttempts(connection: connection, throttle: .standard).forget(name: name)
            let result = "staff \(name) unlocked (\(forgotten) failed logins forgotten)"
            try StaffAudit(connection: connection, actor: actor).record(.unlock, target: name, result: result)
            return result
        }
    }

    /// The hash of the same password made again at today's cost (a login's, with the password it just
    /// verified); the account's sessions stay.
    func replaceHash(staffID: Int64, with hash: String) throws {
        try connection.execute("UPDATE staff SET password_hash = ? WHERE staff_id = ?", [.text(hash), .integer(staffID)])
    }

    private func changeAccount(
        _ name: String, _ action: AuditAction, _ result: String, by actor: StaffAudit.Actor, _ sql: String,
        _ parameters: [SQLValue]
    ) throws -> String {
        try connection.transaction {
            guard let account = try account(named: name) else { throw Failure.noSuchAccount }
            try connection.execute(sql, parameters)
            try connection.execute("DELETE FROM staff_sessions WHERE staff_id = ?", [.integer(account.staffID)])
            try StaffAudit(connection: connection, actor: actor).record(action, target: name, result: result)
            return result
        }
    }

    private static func account(_ row: [String?]) -> Account? {
        guard let id = row[0].flatMap({ Int64($0) }), let name = row[1], let role = row[2].flatMap(StaffRole.init),
            let hash = row[3]
        else { return nil }
        return Account(staffID: id, name: name, role: role, passwordHash: hash, disabled: row[4] == "1")
    }
}
