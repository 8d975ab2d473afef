import MariaDB

extension MariaDBConnection {
    /// Runs `body` in a database transaction of its own. A deadlock or a lock
    /// wait timeout rolls it back and it runs again, up to `attempts` in all;
    /// any other error, or the last attempt's, is thrown. Exactly-once
    /// delivery makes concurrent requests for one transaction or one order
    /// wait on each other's locks: the loser of a deadlock simply runs again.
    func transactionRetryingDeadlocks<Result>(attempts: Int, _ body: () throws -> Result) throws -> Result {
        var attempt = 1
        while true {
            do {
                return try transaction(body)
            } catch let error as MariaDBError where (error.code == 1213 || error.code == 1205) && attempt < attempts {
                ServiceMetrics.databaseRetried(code: error.code)
                attempt += 1
            } catch let error as MariaDBError {
                ServiceMetrics.databaseError(code: error.code)
                throw error
            }
        }
    }
}
