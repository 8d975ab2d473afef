import IAPCore
import MariaDB

/// The `staff` table: accounts of the support console, written by `iapctl
/// staff` and by admins in the console, through this one type.
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

    public func add(name: String, role: StaffRole, password: String) throws {
        guard StaffName.isValid(name) else { throw Failure.invalidName }
        guard password.count >= StaffName.minimumPasswordLength else { throw Failure.weakPassword }
        guard try account(named: name) == nil else { throw Failure.exists }
        try connection.execute(
            """
            INSERT INTO staff (name, role, password_hash, created_at, password_changed_at)
            VALUES (?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))
            """,
            [.text(name), .text(role.rawValue), .text(StaffPassword.hash(password))])
    }

    /// Sets a new password (and enables the account); its sessions end.
    public func setPassword(name: String, password: String) throws {
        guard password.count >= StaffName.minimumPasswordLength else { throw Failure.weakPassword }
        try changeAccount(
            name,
            "UPDATE staff SET password_hash = ?, disabled_at = NULL, password_changed_at = UTC_TIMESTAMP(3) WHERE name = ?",
            [.text(StaffPassword.hash(password)), .text(name)])
    }

    /// Disables the account; its sessions end at once.
    public func disable(name: String) throws {
        try changeAccount(
            name, "UPDATE staff SET disabled_at = COALESCE(disabled_at, UTC_TIMESTAMP(3)) WHERE name = ?", [.text(name)])
    }

    private func changeAccount(_ name: String, _ sql: String, _ parameters: [SQLValue]) throws {
        guard let account = try account(named: name) else { throw Failure.noSuchAccount }
        try connection.transaction {
            try connection.execute(sql, parameters)
            try connection.execute("DELETE FROM staff_sessions WHERE staff_id = ?", [.integer(account.staffID)])
        }
    }

    private static func account(_ row: [String?]) -> Account? {
        guard let id = row[0].flatMap({ Int64($0) }), let name = row[1], let role = row[2].flatMap(StaffRole.init),
            let hash = row[3]
        else { return nil }
        return Account(staffID: id, name: name, role: role, passwordHash: hash, disabled: row[4] == "1")
    }
}
