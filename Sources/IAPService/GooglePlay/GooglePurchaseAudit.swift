import IAPCore
import MariaDB

/// The `receipts` row (`kind` `google`) every Google verify past its input checks leaves: the
/// purchase token's SHA-256 (never the token), the order and user, the client's address,
/// Google's productsv2 answer when there was one, and the transaction id and environment
/// when the purchase had them.
struct GooglePurchaseAudit {
    let connection: MariaDBConnection

    struct Row {
        let tokenSHA256: String
        let orderID: String?
        let userID: String
        let appVersion: String?
        let clientAddress: String?
        let receivedAt: Timestamp
        var transactionID: String? = nil
        var environment: AppleEnvironment? = nil
        /// Google's answer as received; nil when Google gave none.
        var googleAnswer: [UInt8]? = nil
    }

    /// Inserts the row in a statement of its own (autocommit) and returns its `receipt_id`.
    func record(_ row: Row) throws(MariaDBError) -> UInt64 {
        try connection.execute(
            """
            INSERT INTO receipts (kind, sha256, order_id, transaction_id, app_version, user_id, client_ip, environment,
              apple_response, receipt_data, received_at, verified_at)
            VALUES ('google', ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)
            """,
            [
                .text(row.tokenSHA256), .optional(row.orderID), .optional(row.transactionID.map { String($0.prefix(64)) }),
                .optional(row.appVersion), .text(row.userID), .optional(row.clientAddress.map { String($0.prefix(45)) }),
                .optional(row.environment?.rawValue),
                .optional(row.googleAnswer.map { String(decoding: $0, as: UTF8.self) }), .text(row.receivedAt.sql),
                .text(Timestamp.now().sql),
            ]
        ).insertID
    }
}
