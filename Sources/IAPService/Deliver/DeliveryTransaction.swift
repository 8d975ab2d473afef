import Glibc
import MariaDB

extension MariaDBConnection {
    /// Runs `body` in a database transaction of its own, whole again when it
    /// lost to another one, up to `attempts` in all; any other error, or the
    /// last attempt's, is thrown.
    ///
    /// Lost means: a deadlock or a lock wait timeout (exactly-once delivery
    /// makes concurrent requests for one transaction or one order wait on each
    /// other's locks), a Galera certification failure (1213 at COMMIT: another
    /// node committed a conflicting write first; 1180: the node left the cluster
    /// while committing), or the server gone from under
    /// the connection (the next attempt goes to the next address of
    /// `IAP_DB_HOST`). Each run starts from nothing, so running it again is
    /// safe: what the first one committed, if its COMMIT's answer was lost, the
    /// second finds in place. Between attempts the thread sleeps a jittered
    /// 2-4, 4-8, 8-16 ms..., so that two losers do not collide again in step.
    /// `readCommitted`: each run at that isolation level (the webhook's claims).
    func transactionRetryingDeadlocks<Result>(
        attempts: Int, readCommitted: Bool = false, _ body: () throws -> Result
    ) throws -> Result {
        var attempt = 1
        while true {
            do {
                if readCommitted { try execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED") }
                return try transaction(body)
            } catch let error as MariaDBError where error.isLostToAnotherTransaction && attempt < attempts {
                Log.event("database: transaction lost (\(error)), running it again (attempt \(attempt + 1) of \(attempts))")
                ServiceMetrics.databaseRetried(code: error.code)
                Self.backOff(attempt: attempt)
                attempt += 1
            } catch let error as MariaDBError {
                ServiceMetrics.databaseError(code: error.code)
                throw error
            }
        }
    }

    private static func backOff(attempt: Int) {
        let floorMicroseconds = 2_000 << min(attempt - 1, 6)
        usleep(UInt32(Int.random(in: floorMicroseconds...(2 * floorMicroseconds))))
    }
}

extension MariaDBError {
    /// A failure that running the whole database transaction again may cure.
    /// 1180 (error during COMMIT) is how a Galera node that lost the cluster
    /// while committing refuses the commit: the transaction is rolled back.
    var isLostToAnotherTransaction: Bool {
        code == 1213 || code == 1205 || code == 1180 || isServerUnavailable
    }
}
