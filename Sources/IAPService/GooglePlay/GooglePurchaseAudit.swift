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
        /// The order and user as the request named them, until the purchase's account id names others.
        var orderID: String?
        var userID: String
        let appVersion: String?
        let clientAddress: String?
        let receivedAt: Timestamp
        var transactionID: String? = nil
        var environment: AppleEnvironment? = nil
        /// Google's answer as received; nil when Google gave none.
        var googleAnswer: [UInt8]? = nil
    }

    /// Inserts the row, in the caller's database transaction if one is open, and returns its `receipt_id`.
    func record(_ row: Row) throws(MariaDBError) -> UInt64 {
        try connection.execute(
            """
            INSERT INTO receipts (kind, sha256, order_id, transaction_id, app_version, user_id, client_ip, environment,
              apple_response, receipt_data, received_at, verified_at)
            VALUES ('google', ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)
            """,
            Self.columns(row).map(SQLValue.optional) + Self.payload(row, verifiedAt: .now())
        ).insertID
    }

    /// Inserts the rows, one statement for up to `RowChunks.largest`, and gives each its id. Equal
    /// rows (one token posted at once by one user) are interchangeable, so the ids are matched to
    /// the rows by their columns, as `ReceiptStore` does, without assuming an order of RETURNING.
    func record(_ rows: [Row]) throws(MariaDBError) -> [UInt64] {
        var ids: [UInt64] = []
        for chunk in RowChunks.exactChunks(rows) { ids += try insert(chunk) }
        return ids
    }

    private func insert(_ rows: ArraySlice<Row>) throws(MariaDBError) -> [UInt64] {
        let verifiedAt = Timestamp.now()
        let columns = rows.map(Self.columns)
        let returned = try connection.execute(
            """
            INSERT INTO receipts (sha256, order_id, transaction_id, app_version, user_id, client_ip, environment,
              apple_response, received_at, verified_at, kind, receipt_data)
            VALUES \(Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'google', NULL)", count: rows.count).joined(separator: ", "))
            RETURNING receipt_id, sha256, order_id, transaction_id, app_version, user_id, client_ip, environment
            """,
            zip(rows, columns).flatMap { row, values in
                values.map(SQLValue.optional) + Self.payload(row, verifiedAt: verifiedAt)
            }
        ).rows
        var idsByColumns: [[String?]: [UInt64]] = [:]
        for row in returned {
            guard let id = row[0].flatMap({ UInt64($0) }) else { continue }
            idsByColumns[Array(row.dropFirst()), default: []].append(id)
        }
        let ids = columns.compactMap { idsByColumns[$0]?.popLast() }
        guard returned.count == rows.count, ids.count == rows.count else {
            throw MariaDBError.unexpectedRowCount(
                "INSERT INTO receipts (google) RETURNING", expected: rows.count, got: UInt64(ids.count))
        }
        return ids
    }

    /// A row's columns that RETURNING gives back, in its order.
    private static func columns(_ row: Row) -> [String?] {
        [row.tokenSHA256, row.orderID, row.transactionID.map { String($0.prefix(64)) }, row.appVersion, row.userID,
         row.clientAddress.map { String($0.prefix(45)) }, row.environment?.rawValue]
    }

    /// The rest of a row: Google's answer and its times.
    private static func payload(_ row: Row, verifiedAt: Timestamp) -> [SQLValue] {
        [.optional(row.googleAnswer.map { String(decoding: $0, as: UTF8.self) }), .text(row.receivedAt.sql),
         .text(verifiedAt.sql)]
    }
}
