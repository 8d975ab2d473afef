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
        /// The verification's answer when it is known before the row is
        /// written (a receipt checked here, `ReceiptChecker.outcomeWithoutApple`):
        /// the row goes in complete, as a signed transaction's does, and no
        /// UPDATE of it follows. Nil: Apple is asked after the row is written.
        var knownAnswer: KnownAnswer? = nil
    }

    /// What `recordAppleAnswers` would write, `verified_at` included, written
    /// by the INSERT instead.
    struct KnownAnswer {
        let environment: AppleEnvironment?
        let answer: [UInt8]?
        /// `signed_data_error`: the check a receipt failed here.
        let failedCheck: String?
    }

    /// Step 1 of verifications: the receipts are on record before Apple is
    /// called, with what each request said of its receipt; their ids, in order.
    /// A batch is one INSERT, atomic by itself, when it can be; rows in several
    /// statements (`RowChunks`) go in one database transaction (one commit).
    /// The ids are the ones the database returns: computing them from the first
    /// insert id and the server's `auto_increment_increment` breaks when a
    /// failover or a Galera membership change alters the numbering.
    ///
    /// A receipt whose bytes `index` knows in a recent row is written without
    /// them, naming that row (`bytes_in`); so is a receipt whose bytes an
    /// earlier receipt of the batch stores, in a statement after that one's.
    /// Rows that store their bytes are remembered in `index` once committed.
    func record(_ receipts: [NewReceipt], index: inout ReceiptBytesIndex) throws -> [UInt64] {
        let placements = Self.place(receipts, in: &index)
        let ids = Self.fitInOneStatement(placements)
            ? try insert(receipts, placed: placements)
            : try connection.transaction { try insert(receipts, placed: placements) }
        Self.remember(receipts, placed: placements, ids: ids, in: &index)
        return ids
    }

    /// `record` inside the caller's database transaction, the rows placed
    /// (`place`) before it began; once it has committed, the caller remembers
    /// them (`remember`): rows remembered in a transaction that rolled back
    /// would be named by later ones without being there.
    func recordInTransaction(_ receipts: [NewReceipt], placed placements: [ReceiptBytesIndex.Placement]) throws -> [UInt64] {
        try insert(receipts, placed: placements)
    }

    /// Where each receipt's bytes go: its own row, or one `index` knows.
    static func place(_ receipts: [NewReceipt], in index: inout ReceiptBytesIndex) -> [ReceiptBytesIndex.Placement] {
        index.place(receipts.map { ($0.request.receipt.sha256Hex, $0.receivedAt.milliseconds) })
    }

    /// The committed rows that store their bytes, for later rows to name.
    static func remember(
        _ receipts: [NewReceipt], placed placements: [ReceiptBytesIndex.Placement], ids: [UInt64],
        in index: inout ReceiptBytesIndex
    ) {
        for (receipt, (placement, id)) in zip(receipts, zip(placements, ids)) where placement == .stored {
            index.remember(sha256Hex: receipt.request.receipt.sha256Hex, receiptID: id,
                           receivedAtMs: receipt.receivedAt.milliseconds)
        }
    }

    /// Whether the rows go in one INSERT: few enough, and none of them after
    /// another of the batch that holds its bytes.
    private static func fitInOneStatement(_ placements: [ReceiptBytesIndex.Placement]) -> Bool {
        RowChunks.fitInOneStatement(placements.count) && !placements.contains(where: \.followsItsHolder)
    }

    /// The rows of `receipts`, in as few statements as their placements allow:
    /// the ones whose bytes are stored in a row of this batch come after it.
    private func insert(_ receipts: [NewReceipt], placed placements: [ReceiptBytesIndex.Placement]) throws -> [UInt64] {
        var ids = [UInt64](repeating: 0, count: receipts.count)
        let first = placements.indices.filter { !placements[$0].followsItsHolder }
        let second = placements.indices.filter { placements[$0].followsItsHolder }
        for positions in [first, second] where !positions.isEmpty {
            let rows = positions.map { position -> (NewReceipt, UInt64?) in
                switch placements[position] {
                case .stored: return (receipts[position], nil)
                case .storedIn(let receiptID): return (receipts[position], receiptID)
                case .storedWithReceipt(let holder): return (receipts[position], ids[holder])
                }
            }
            var rest = rows[...]
            var written: [UInt64] = []
            for size in RowChunks.exact(rows.count) {
                written += try insert(Array(rest.prefix(size)))
                rest = rest.dropFirst(size)
            }
            for (position, id) in zip(positions, written) { ids[position] = id }
        }
        return ids
    }

    /// One INSERT of `receipts`, each with its bytes or the row that holds
    /// them, and given back the id of its own row. Rows come back with every
    /// column the receipt sets but its bytes (the SHA-256 stands for them) and
    /// its time, and each receipt takes a row equal to it: rows that are equal
    /// are interchangeable (the same bytes in one statement are all stored, or
    /// all in one row), so no order of the returned rows is assumed.
    private func insert(_ receipts: [(NewReceipt, bytesIn: UInt64?)]) throws(MariaDBError) -> [UInt64] {
        let verifiedAt = Timestamp.now()
        let returned = receipts.map { Self.returnedColumns($0.0) }
        let parameters = zip(receipts, returned).flatMap { row, columns -> [SQLValue] in
            let (receipt, bytesIn) = row
            let known = receipt.knownAnswer
            return columns.map(SQLValue.optional) + [
                bytesIn == nil ? .asciiBytes(receipt.request.receipt.base64) : .null,
                bytesIn.map { .integer(Int64($0)) } ?? .null, .text(receipt.receivedAt.sql),
                .optional(known?.environment?.rawValue),
                .optional(known?.answer.map { String(decoding: $0, as: UTF8.self) }),
                .optional(known?.failedCheck), known == nil ? .null : .text(verifiedAt.sql),
                .text(receipt.request.receipt.replayKeyHex),
            ]
        }
        let rows = try connection.execute(
            """
            INSERT INTO receipts (sha256, order_id, transaction_id, app_version, user_id, client_ip, receipt_data,
              bytes_in, received_at, environment, apple_response, signed_data_error, verified_at, signed_key)
            VALUES \(SQLPlaceholders.rows(receipts.count, columns: 14))
            RETURNING receipt_id, sha256, order_id, transaction_id, app_version, user_id, client_ip
            """,
            parameters
        ).rows
        var idsByColumns: [[String?]: [UInt64]] = [:]
        for row in rows {
            guard let id = row[0].flatMap({ UInt64($0) }) else { continue }
            idsByColumns[Array(row.dropFirst()), default: []].append(id)
        }
        let ids = returned.compactMap { idsByColumns[$0]?.popLast() }
        guard rows.count == receipts.count, ids.count == receipts.count else {
            throw MariaDBError.unexpectedRowCount(
                "INSERT INTO receipts RETURNING", expected: receipts.count, got: UInt64(ids.count))
        }
        return ids
    }

    /// The columns of a receipt's row that RETURNING gives back, in its order.
    private static func returnedColumns(_ receipt: NewReceipt) -> [String?] {
        let request = receipt.request
        return [request.receipt.sha256Hex, request.orderID, request.transactionID, request.appVersion, receipt.userID,
                receipt.clientAddress.map { String($0.prefix(45)) }]
    }

    /// Stores Apple's last answer to each receipt row: one statement for up to
    /// `RowChunks.largest` rows. Each row must be there: a receipt id that
    /// matches no row is an error, and the caller's transaction rolls back.
    func recordAppleAnswers(_ records: [AppleAnswerRecord], at time: Timestamp) throws(MariaDBError) {
        for chunk in RowChunks.padded(records) {
            try recordAppleAnswersOnce(chunk, at: time)
        }
    }

    /// Rows written complete (`ReceiptRowState.checkedHere`) whose delivery did not
    /// happen, made unverified again: retry-pending's, as a receipt whose
    /// Apple call never completed.
    func reopen(_ receiptIDs: [UInt64]) throws(MariaDBError) {
        for chunk in RowChunks.padded(receiptIDs) {
            try connection.execute(
                "UPDATE receipts SET verified_at = NULL WHERE receipt_id IN (\(SQLPlaceholders.list(chunk.count)))",
                chunk.map { .integer(Int64($0)) })
        }
    }

    /// One UPDATE; a record repeated (`RowChunks.padded`) names its row twice,
    /// which the CASE and the IN list take as once.
    private func recordAppleAnswersOnce(_ records: [AppleAnswerRecord], at time: Timestamp) throws(MariaDBError) {
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
        // Only a chunk holding a receipt refused here sets signed_data_error: Apple's answers keep their statement.
        let failedChecks = records.contains { $0.failedCheck != nil }
        if failedChecks { addCase { .optional($0.failedCheck) } }
        parameters += records.map { .integer(Int64($0.receiptID)) }
        try connection.execute(
            """
            UPDATE receipts SET environment = CASE receipt_id \(cases) END,
              apple_status = CASE receipt_id \(cases) END,
              apple_response = CASE receipt_id \(cases) END,
              verified_at = CASE receipt_id \(cases) END\(failedChecks ? ",\n  signed_data_error = CASE receipt_id \(cases) END" : "")
            WHERE receipt_id IN (\(SQLPlaceholders.list(records.count)))
            """,
            parameters
        ).requireRows(Set(records.map(\.receiptID)).count, "UPDATE receipts")
    }
}
