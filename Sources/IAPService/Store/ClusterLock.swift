import Glibc
import MariaDB

/// A lock held in the `cluster_locks` table, so that two runs of an admin job
/// (`iapctl migrate`, `iapctl retry-pending`) exclude each other even when
/// they run against two nodes of a Galera cluster. `GET_LOCK` cannot do that:
/// it is local to the node that grants it.
///
/// Taking the lock is an INSERT of its row: of two runs inserting at once, on
/// one server the second finds the key taken (1062), and on two Galera nodes
/// the second loses certification at COMMIT (1213). The row carries a lease:
/// a run that died without releasing it is taken over once `expires_at` has
/// passed, and a live run renews it as it goes.
public final class ClusterLock {
    private let connection: MariaDBConnection
    public let name: String
    private let leaseSeconds: Int
    private let holder: String

    /// The table, made by `iapctl migrate` before it takes its own lock.
    public static let createTable = """
        CREATE TABLE IF NOT EXISTS cluster_locks (
          name       VARCHAR(64) CHARACTER SET ascii NOT NULL COMMENT 'The job the lock is for, e.g. retry_pending',
          holder     VARCHAR(128) NOT NULL COMMENT 'host:pid:random of the run holding it',
          acquired_at DATETIME(3) NOT NULL COMMENT 'UTC',
          expires_at DATETIME(3) NOT NULL COMMENT 'UTC: past this the lock is free, whatever the row says',
          PRIMARY KEY (name)
        ) ENGINE=InnoDB COMMENT='Admin jobs that must not run twice at once, across Galera nodes too'
        """

    public init(connection: MariaDBConnection, name: String, leaseSeconds: Int) {
        self.connection = connection
        self.name = name
        self.leaseSeconds = leaseSeconds
        var host = [CChar](repeating: 0, count: 64)
        gethostname(&host, host.count - 1)
        let hostName = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        holder = "\(hostName):\(getpid()):\(UInt32.random(in: .min ... .max))"
    }

    /// Takes the lock; false when another run holds it. On Galera, a statement
    /// here that loses to another node's write on the row (1213) means that run
    /// is taking or releasing it: not taken, this time.
    public func acquire() throws(MariaDBError) -> Bool {
        do {
            try connection.execute(
                "DELETE FROM cluster_locks WHERE name = ? AND expires_at < UTC_TIMESTAMP(3)", [.text(name)])
            try connection.execute(
                """
                INSERT INTO cluster_locks (name, holder, acquired_at, expires_at)
                VALUES (?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL ? SECOND)
                """,
                [.text(name), .text(holder), .integer(Int64(leaseSeconds))])
            return true
        } catch {
            guard error.code == 1062 || error.code == 1213 else { throw error }
            return false
        }
    }

    /// Takes the lock, waiting up to `seconds` for another run to release it.
    public func acquire(waitingUpTo seconds: Int) throws(MariaDBError) -> Bool {
        let deadline = time(nil) + seconds
        while true {
            if try acquire() { return true }
            if time(nil) >= deadline { return false }
            usleep(250_000)
        }
    }

    /// Extends the lease; throws when the lock was lost meanwhile (the lease
    /// ran out and another run took it): the caller must stop.
    public func renew() throws(MariaDBError) {
        try connection.execute(
            "UPDATE cluster_locks SET expires_at = UTC_TIMESTAMP(3) + INTERVAL ? SECOND WHERE name = ? AND holder = ?",
            [.integer(Int64(leaseSeconds)), .text(name), .text(holder)]
        ).requireRows(1, "UPDATE cluster_locks (the lock \(name) was lost)")
    }

    /// Runs of the release's DELETE, in all, when it loses to another transaction.
    static let releaseAttempts = 5

    /// Runs `body` while holding the lock (taken already), then releases it,
    /// also when `body` throws. A release that failed is thrown when `body`
    /// succeeded, and logged when `body` threw an error of its own.
    public func whileHeld<Result>(_ body: () throws -> Result) throws -> Result {
        let result: Result
        do {
            result = try body()
        } catch {
            do { try release() } catch let releaseError { Log.event("\(releaseError)") }
            throw error
        }
        try release()
        return result
    }

    /// Deletes the lock's row. On Galera the DELETE can lose to a write on the
    /// row committed through another node (1213: seen when the test holds the row
    /// on this node and writes it through another). Then it runs again, as a
    /// delivery's transaction does. Were the failure ignored, the row would keep
    /// every other run out until `expires_at` (`iapctl migrate`: 600 s); so it is
    /// thrown when it persists.
    public func release() throws(ReleaseFailed) {
        do {
            try connection.transactionRetryingDeadlocks(attempts: Self.releaseAttempts) {
                _ = try connection.execute(
                    "DELETE FROM cluster_locks WHERE name = ? AND holder = ?", [.text(name), .text(holder)])
            }
        } catch {
            throw ReleaseFailed(name: name, leaseSeconds: leaseSeconds, cause: "\(error)")
        }
    }

    /// The lock's row is left: it holds the lock until its lease ends.
    public struct ReleaseFailed: Error, CustomStringConvertible {
        let name: String
        let leaseSeconds: Int
        let cause: String

        public var description: String {
            "the lock \(name) could not be released (\(cause)): it stays held until its lease ends, at most "
                + "\(leaseSeconds) s, unless an operator deletes its row (DELETE FROM cluster_locks WHERE name = '\(name)')"
        }
    }
}
