import IAPCore
import MariaDB

/// Where a delivery with no client in the loop (a notification, `iapctl lookup --deliver`,
/// `iapctl notifications sync`) owes Apple its Finish Transaction: a `transaction_finishes` row,
/// written in the delivery's own database transaction, so that a crash leaves no delivery
/// unfinished. The service's `TransactionFinisher` makes the call. A client's own delivery (a
/// receipt or a JWS it posted) is never written here: the app finishes it itself.
struct FinishOutbox {
    let connection: MariaDBConnection

    /// Owes Apple the finish of `transactionID`, delivered now, unless it was finished before or is
    /// owed already. `signedEnvironment` is the environment Apple signed: `Xcode` and `LocalTesting`
    /// transactions are known to no Apple server, and nothing is owed for them.
    func enqueue(_ transactionID: String, signedEnvironment: String, at time: Timestamp) throws(MariaDBError) {
        guard let environment = AppleEnvironment(rawValue: signedEnvironment) else { return }
        try connection.execute(
            """
            INSERT INTO transaction_finishes (transaction_id, environment, created_at, next_attempt_at)
            SELECT transaction_id, ?, ?, ? FROM transactions WHERE transaction_id = ? AND finished_at IS NULL
            ON DUPLICATE KEY UPDATE transaction_id = transaction_finishes.transaction_id
            """,
            [.text(environment.rawValue), .text(time.sql), .text(time.sql), .text(transactionID)])
    }
}
