internal import Crypto
import IAPCore
import MariaDB
internal import SignedData

/// SQL of a StoreKit 2 transaction's audit row (`receipts`, kind `jws`) and
/// of the revocation details Apple signs into a transaction.
///
/// A posted JWS's row is written once, complete: the JWS is checked offline
/// before it is recorded, so the row carries the outcome of that check
/// (`verified_at` set, `signed_data_error` the reason of a refusal). A
/// `transaction_id` request's row is written before Apple is asked (no JWS
/// yet: `receipt_data` empty, `verified_at` NULL) and completed once the
/// fetch ends, whatever its end (`complete`), so it is open only while Apple
/// is asked, or for good if the process dies meanwhile: the client asks again
/// with a new request, and `iapctl retry-pending` takes receipts only.
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
        let outcome: Outcome
        let receivedAt: Timestamp
    }

    /// What a row says of its JWS.
    enum Outcome: Sendable {
        /// It verified: the transaction (with Apple's payload as signed).
        case verified(SignedTransaction)
        /// It was refused, for this reason.
        case refused(SignedDataError)
        /// A `transaction_id` request's row, written before Apple is asked
        /// (`jws` empty): `complete` fills it in.
        case fetching(transactionID: String)
    }

    /// How a `transaction_id` request's fetch ended, for its row.
    enum Fetched: Sendable {
        /// Apple returned this JWS, and the offline check said this; the
        /// request resolved to this order and user (those of the request for a
        /// refused JWS or a 409).
        case signed(jws: String, outcome: Outcome, orderID: String?, userID: String?)
        /// `4040010` from production and the sandbox: kept as `apple_status`.
        case notFound
        /// No JWS came (Apple unreachable, failing, 401, an answer not as documented).
        case unavailable
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
            var verifiedAt = SQLValue.text(row.receivedAt.sql)
            if case .fetching = row.outcome { verifiedAt = .null }
            return values.map(SQLValue.optional) + [.asciiBytes(row.jws), .text(row.receivedAt.sql), verifiedAt]
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
        let verdict = verdictColumns(row.outcome)
        return [SHA256.hexDigest(row.jws.utf8), row.orderID, verdict.transactionID, row.appVersion, row.userID,
                row.clientAddress.map { String($0.prefix(45)) }, verdict.environment, verdict.refusal, verdict.payload]
    }

    /// The columns an outcome fills.
    private static func verdictColumns(
        _ outcome: Outcome
    ) -> (transactionID: String?, environment: String?, refusal: String?, payload: String?) {
        switch outcome {
        case .verified(let transaction):
            return (String(transaction.transactionID.prefix(64)), String(transaction.environment.prefix(16)), nil,
                    String(decoding: transaction.payload, as: UTF8.self))
        case .refused(let reason):
            return (nil, nil, reason.rawValue, nil)
        case .fetching(let transactionID):
            return (transactionID, nil, nil, nil)
        }
    }

    /// Completes the row `open` wrote for a `transaction_id` request: the JWS
    /// Apple returned as `receipt_data` with its SHA-256 (as a posted JWS's
    /// row holds it), the outcome of its check, and `verified_at`. A fetch that
    /// brought no JWS leaves `receipt_data` empty (`apple_status` 4040010 when
    /// neither environment knows the transaction).
    func complete(_ receiptID: UInt64, with fetched: Fetched, at now: Timestamp) throws(MariaDBError) {
        var jws: String?
        var orderID: String?
        var userID: String?
        var verdict: (transactionID: String?, environment: String?, refusal: String?, payload: String?)
        var appleStatus = SQLValue.null
        switch fetched {
        case .signed(let signedJWS, let outcome, let resolvedOrderID, let resolvedUserID):
            (jws, orderID, userID) = (signedJWS, resolvedOrderID, resolvedUserID)
            verdict = Self.verdictColumns(outcome)
        case .notFound:
            verdict = (nil, nil, nil, nil)
            appleStatus = .integer(Int64(ServerAPICallSequence.transactionIDNotFound))
        case .unavailable:
            verdict = (nil, nil, nil, nil)
        }
        try connection.execute(
            """
            UPDATE receipts SET sha256 = COALESCE(?, sha256), receipt_data = COALESCE(?, receipt_data),
              order_id = COALESCE(?, order_id), user_id = COALESCE(?, user_id), environment = ?, apple_status = ?,
              signed_data_error = ?, apple_response = ?, verified_at = ?
            WHERE receipt_id = ? AND kind = 'jws' AND verified_at IS NULL
            """,
            [
                .optional(jws.map { SHA256.hexDigest($0.utf8) }), .optional(jws), .optional(orderID), .optional(userID),
                .optional(verdict.environment), appleStatus, .optional(verdict.refusal), .optional(verdict.payload),
                .text(now.sql), .integer(Int64(receiptID)),
            ]
        ).requireRows(1, "UPDATE receipts (jws fetched)")
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
