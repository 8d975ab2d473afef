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
    struct Row: Sendable {
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

    /// Inserts the rows, one statement for up to `RowChunks.largest`, and
    /// gives each its id. Equal rows (one JWS posted at once by one user) are
    /// interchangeable, so the ids are matched to the rows by their columns,
    /// as `ReceiptStore` does, without assuming an order of RETURNING.
    func record(_ rows: [Row]) throws(MariaDBError) -> [UInt64] {
        var ids: [UInt64] = []
        var rest = rows[...]
        for size in RowChunks.exact(rows.count) {
            ids += try insert(rest.prefix(size))
            rest = rest.dropFirst(size)
        }
        return ids
    }

    private func insert(_ rows: ArraySlice<Row>) throws(MariaDBError) -> [UInt64] {
        let columns = rows.map(Self.columns)
        let parameters = zip(rows, columns).flatMap { row, values -> [SQLValue] in
            values.map(SQLValue.optional) + [.text(row.jws), .text(row.receivedAt.sql), .text(row.receivedAt.sql)]
        }
        let returned = try connection.execute(
            """
            INSERT INTO receipts (sha256, order_id, transaction_id, app_version, user_id, client_ip,
              environment, signed_data_error, apple_response, kind, receipt_data, received_at, verified_at)
            VALUES \(Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?, 'jws', ?, ?, ?)", count: rows.count).joined(separator: ", "))
            RETURNING receipt_id, sha256, order_id, transaction_id, app_version, user_id, client_ip, environment,
              signed_data_error
            """,
            parameters
        ).rows
        var idsByColumns: [[String?]: [UInt64]] = [:]
        for row in returned {
            guard let id = row[0].flatMap({ UInt64($0) }) else { continue }
            idsByColumns[Array(row.dropFirst()), default: []].append(id)
        }
        let ids = columns.compactMap { idsByColumns[Array($0.prefix(8))]?.popLast() }
        guard returned.count == rows.count, ids.count == rows.count else {
            throw MariaDBError.unexpectedRowCount(
                "INSERT INTO receipts (jws) RETURNING", expected: rows.count, got: UInt64(ids.count))
        }
        return ids
    }

    /// A row's columns: the eight RETURNING gives back, then the payload.
    private static func columns(_ row: Row) -> [String?] {
        var transactionID: String?
        var environment: String?
        var payload: String?
        var refusal: String?
        switch row.outcome {
        case .success(let verified):
            transactionID = String(verified.transaction.transactionID.prefix(64))
            environment = String(verified.transaction.environment.prefix(16))
            payload = String(decoding: verified.payload, as: UTF8.self)
        case .failure(let reason):
            refusal = reason.rawValue
        }
        return [SHA256.hexDigest(row.jws.utf8), row.orderID, transactionID, row.appVersion, row.userID,
                row.clientAddress.map { String($0.prefix(45)) }, environment, refusal, payload]
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
