import IAPCore
import MariaDB

/// SQL of the `receipts` audit table.
struct ReceiptStore {
    let connection: MariaDBConnection

    /// A verify request's receipt, as step 1 records it.
    struct NewReceipt {
        let request: VerifyRequest
        let userID: String
        let clientAddress: String?
        let receivedAt: Timestamp
    }

    /// How the server numbers the rows of one multi-row INSERT.
    struct Numbering {
        /// `innodb_autoinc_lock_mode` 0 or 1 (the default): the rows of one
        /// statement get consecutive ids. With 2 they may interleave with other
        /// statements', and each receipt needs a statement of its own.
        let isConsecutive: Bool
        /// `auto_increment_increment`: the step between consecutive ids.
        let increment: UInt64

        /// Before the server was asked: a statement per receipt.
        static let unknown = Numbering(isConsecutive: false, increment: 1)
    }

    /// Reads the server's numbering of AUTO_INCREMENT rows.
    func numbering() throws(MariaDBError) -> Numbering {
        let row = try connection.execute("SELECT @@innodb_autoinc_lock_mode, @@auto_increment_increment").first
        let mode = row?[0].flatMap { Int($0) } ?? 2
        return Numbering(isConsecutive: mode < 2, increment: row?[1].flatMap { UInt64($0) } ?? 1)
    }

    /// Step 1 of verifications: the receipts are on record before Apple is
    /// called, with what each request said of its receipt. In one statement
    /// (one commit) when `numbering` lets the ids be known; their ids, in order.
    func record(_ receipts: [NewReceipt], numbering: Numbering) throws(MariaDBError) -> [UInt64] {
        guard numbering.isConsecutive || receipts.count == 1 else {
            var ids: [UInt64] = []
            for receipt in receipts {
                ids += try record([receipt], numbering: numbering)
            }
            return ids
        }
        let parameters = receipts.flatMap { receipt -> [SQLValue] in
            let request = receipt.request
            return [.text(request.receipt.sha256Hex), .text(request.receipt.base64), .optional(request.orderID),
                    .optional(request.transactionID), .optional(request.appVersion), .text(receipt.userID),
                    .optional(receipt.clientAddress.map { String($0.prefix(45)) }), .text(receipt.receivedAt.sql)]
        }
        let first = try connection.execute(
            """
            INSERT INTO receipts (sha256, receipt_data, order_id, transaction_id, app_version, user_id, client_ip,
              received_at)
            VALUES \(SQLPlaceholders.rows(receipts.count, columns: 8))
            """,
            parameters
        ).insertID
        return (0..<UInt64(receipts.count)).map { first + $0 * numbering.increment }
    }

    /// Apple's answer to the first completed verification of these exact
    /// receipt bytes that Apple found valid (later ones name the same transactions).
    /// The index is forced: for `ORDER BY receipt_id LIMIT 1` the optimizer
    /// would otherwise walk the primary key through the whole table.
    func firstValidAnswer(sha256: String) throws(MariaDBError) -> (environment: AppleEnvironment, answer: [UInt8])? {
        guard let row = try connection.execute(
            """
            SELECT environment, apple_response FROM receipts FORCE INDEX (receipts_sha256)
            WHERE sha256 = ? AND verified_at IS NOT NULL AND apple_status IN (0, 21006) AND apple_response IS NOT NULL
            ORDER BY receipt_id LIMIT 1
            """,
            [.text(sha256)]
        ).first, let environment = row[0].flatMap(AppleEnvironment.init(rawValue:)), let answer = row[1]
        else { return nil }
        return (environment, Array(answer.utf8))
    }

    /// Apple's last answer to one receipt row, as it is stored.
    struct AppleAnswerRecord {
        let receiptID: UInt64
        let environment: AppleEnvironment?
        let appleStatus: Int?
        let answer: [UInt8]?
        /// Marks the verification as done (`verified_at`); a receipt left
        /// without it is one whose Apple call never completed, to be verified again.
        let completed: Bool
    }

    /// Stores Apple's last answer to each receipt row, in one statement.
    func recordAppleAnswers(_ records: [AppleAnswerRecord], at time: Timestamp) throws(MariaDBError) {
        guard !records.isEmpty else { return }
        let cases = Array(repeating: "WHEN ? THEN ?", count: records.count).joined(separator: " ")
        var parameters: [SQLValue] = []
        parameters.reserveCapacity(records.count * 9)
        func addCase(_ value: (AppleAnswerRecord) -> SQLValue) {
            for record in records {
                parameters += [.integer(Int64(record.receiptID)), value(record)]
            }
        }
        addCase { .optional($0.environment?.rawValue) }
        addCase { $0.appleStatus.map { .integer(Int64($0)) } ?? .null }
        addCase { .optional($0.answer.map { String(decoding: $0, as: UTF8.self) }) }
        addCase { $0.completed ? .text(time.sql) : .null }
        parameters += records.map { .integer(Int64($0.receiptID)) }
        try connection.execute(
            """
            UPDATE receipts SET environment = CASE receipt_id \(cases) END,
              apple_status = CASE receipt_id \(cases) END,
              apple_response = CASE receipt_id \(cases) END,
              verified_at = CASE receipt_id \(cases) END
            WHERE receipt_id IN (\(SQLPlaceholders.list(records.count)))
            """,
            parameters)
    }
}
