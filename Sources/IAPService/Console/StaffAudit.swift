import IAPCore
import MariaDB

/// `staff_audit`: who did what to which player, when, from where, and what
/// came of it. A row is written in the database transaction of the change it
/// describes (callers run `record` inside `connection.transaction`), so that no
/// change is committed without its row; its `user_id` is the player the
/// changed rows belong to, read from the database, never a form's field.
public struct StaffAudit {
    /// Who acts, and from where.
    public struct Actor: Sendable {
        public let name: String
        public let clientAddress: String?

        public init(name: String, clientAddress: String?) {
            self.name = name
            self.clientAddress = clientAddress
        }

        /// `iapctl` on the server: the name the table's comment gives it, no address.
        public static let commandLine = Actor(name: "iapctl", clientAddress: nil)
    }

    let connection: MariaDBConnection
    let actor: Actor

    public init(connection: MariaDBConnection, actor: Actor) {
        self.connection = connection
        self.actor = actor
    }

    public func record(_ action: AuditAction, userID: String? = nil, target: String?, result: String) throws {
        try connection.execute(
            """
            INSERT INTO staff_audit (staff_name, action, user_id, target, client_ip, result, created_at)
            VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3))
            """,
            [.text(String(actor.name.prefix(64))), .asciiBytes(action.rawValue), userID.map { .text($0) } ?? .null,
             target.map { .text(String($0.prefix(255))) } ?? .null, actor.clientAddress.map { .asciiBytes($0) } ?? .null,
             .text(String(result.prefix(255)))])
    }
}
