internal import Crypto
import IAPCore
import MariaDB

/// Console sessions, kept server-side in `staff_sessions`: the cookie carries a
/// random token, the table its SHA-256, so a copy of the table opens no session.
struct ConsoleSessions {
    /// A logged-in staff member, for one request.
    struct Session {
        let tokenSHA256: String
        let staffName: String
        let role: StaffRole
        let csrfToken: String
    }

    let connection: MariaDBConnection
    let lifetime: SessionLifetime

    /// Opens a session; returns the cookie's token.
    func open(staffID: Int64, clientAddress: String?) throws -> String {
        let token = StaffPassword.randomToken()
        try connection.execute(
            """
            INSERT INTO staff_sessions (token_sha256, staff_id, csrf_token, client_ip, created_at, last_seen_at)
            VALUES (?, ?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))
            """,
            [.asciiBytes(SHA256.hexDigest(Array(token.utf8))), .integer(staffID), .asciiBytes(StaffPassword.randomToken()),
             clientAddress.map { .asciiBytes($0) } ?? .null])
        return token
    }

    /// The session of a cookie's token, touched (its idle time starts again); nil
    /// when there is none, it expired (then it is deleted), or its account was
    /// disabled or its password changed since.
    func current(token: String?) throws -> Session? {
        guard let token, token.utf8.count == 64 else { return nil }
        let hash = SHA256.hexDigest(Array(token.utf8))
        guard let row = try connection.execute(
            """
            SELECT s.csrf_token, st.name, st.role,
                   TIMESTAMPDIFF(MICROSECOND, s.created_at, UTC_TIMESTAMP(3)) DIV 1000,
                   TIMESTAMPDIFF(MICROSECOND, s.last_seen_at, UTC_TIMESTAMP(3)) DIV 1000
            FROM staff_sessions s JOIN staff st ON st.staff_id = s.staff_id
            WHERE s.token_sha256 = ? AND st.disabled_at IS NULL AND s.created_at >= st.password_changed_at
            """, [.asciiBytes(hash)]
        ).first, let csrf = row[0], let name = row[1], let role = row[2].flatMap(StaffRole.init),
            let age = row[3].flatMap({ Int64($0) }), let idle = row[4].flatMap({ Int64($0) })
        else { return nil }
        guard lifetime.isValid(ageMs: age, idleMs: idle) else {
            try close(tokenSHA256: hash)
            return nil
        }
        try connection.execute(
            "UPDATE staff_sessions SET last_seen_at = UTC_TIMESTAMP(3) WHERE token_sha256 = ?", [.asciiBytes(hash)])
        return Session(tokenSHA256: hash, staffName: name, role: role, csrfToken: csrf)
    }

    func close(tokenSHA256: String) throws {
        try connection.execute("DELETE FROM staff_sessions WHERE token_sha256 = ?", [.asciiBytes(tokenSHA256)])
    }
}
