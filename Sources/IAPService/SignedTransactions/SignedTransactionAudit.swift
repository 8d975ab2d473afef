internal import Crypto
import IAPCore
import MariaDB
internal import SignedData

/// SQL of a posted StoreKit 2 transaction's audit row (`receipts`, kind
/// `jws`) and of the revocation details Apple signs into a transaction.
///
/// The row is written once, complete: the JWS is checked offline before it
/// is recorded, so the row carries the outcome of that check (`verified_at`
/// set, `signed_data_error` the reason of a refusal). A `jws` row is never
/// left unverified, so `iapctl retry-pending` (verifyReceipt) never takes one.
struct SignedTransactionAudit {
    let connection: MariaDBConnection

    /// What the row of one request says.
    struct Row {
        let jws: String
        /// The order and user the request resolved to (`user_id` is empty
        /// when a refused JWS came without one).
        let orderID: String?
        let userID: String
        let appVersion: String?
        let clientAddress: String?
        /// The verified transaction and its payload, or why the JWS was refused.
        let outcome: Result<(transaction: SignedTransaction, payload: [UInt8]), SignedDataError>
        let receivedAt: Timestamp
    }

    /// Inserts the row and gives its id.
    func record(_ row: Row) throws(MariaDBError) -> UInt64 {
        var transactionID: String?
        var environment: String?
        var payload: String?
        var refusal: String?
        switch row.outcome {
        case .success(let verified):
            transactionID = verified.transaction.transactionID
            environment = verified.transaction.environment
            payload = String(decoding: verified.payload, as: UTF8.self)
        case .failure(let reason):
            refusal = reason.rawValue
        }
        let result = try connection.execute(
            """
            INSERT INTO receipts (kind, sha256, receipt_data, order_id, transaction_id, app_version, user_id, client_ip,
              environment, apple_response, signed_data_error, received_at, verified_at)
            VALUES ('jws', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(SHA256.hexDigest(row.jws.utf8)), .text(row.jws), .optional(row.orderID),
                .optional(transactionID.map { String($0.prefix(64)) }), .optional(row.appVersion), .text(row.userID),
                .optional(row.clientAddress.map { String($0.prefix(45)) }),
                .optional(environment.map { String($0.prefix(16)) }), .optional(payload), .optional(refusal),
                .text(row.receivedAt.sql), .text(row.receivedAt.sql),
            ])
        try result.requireRows(1, "INSERT INTO receipts (jws)")
        return result.insertID
    }

    /// Keeps Apple's revocation details on a revoked transaction's row (which
    /// `Delivery` has just inserted or marked refunded, in the same database
    /// transaction).
    func recordRevocation(of transaction: SignedTransaction) throws(MariaDBError) {
        try connection.execute(
            """
            UPDATE transactions SET revocation_reason = ?, revocation_type = ?, revocation_percentage = ?
            WHERE transaction_id = ? AND state = 'refunded'
            """,
            [
                transaction.revocationReason.map { .integer(Int64($0)) } ?? .null,
                .optional(transaction.revocationType.map { String($0.prefix(32)) }),
                transaction.revocationPercentage.map { .integer(Int64($0)) } ?? .null,
                .text(transaction.transactionID),
            ])
    }
}
