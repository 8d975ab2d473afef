import IAPCore
import MariaDB

/// The audit rows of replays answered from the database (`ReplayShortcut`):
/// who asked, when, for which receipt (by SHA-256) and which earlier row
/// answered, so that a replay by another user is on record. The answer does
/// not wait for its row: a thread of its own writes the rows in batches (one
/// INSERT of up to `RowChunks.largest` rows, one commit for up to
/// `batchLimit`), since a commit per retried receipt would cost more than the
/// replay itself. The receipt's bytes are not stored again: `replay_of` names
/// the row whose answer was reused, which holds them or names the row that
/// does (`bytes_in`); view `receipt_bytes` follows both. A replay of another
/// encoding of that receipt (same replay key, other bytes) stores its own.
///
/// Its queue is bounded (`QueueLimit`); a row it cannot take, or that the
/// database refuses, is logged and lost: the answer has been given already.
final class ReplayAudit: Sendable {
    /// One replay's row.
    struct Row: Sendable {
        let request: VerifyRequest
        let userID: String
        let clientAddress: String?
        let receivedAt: Timestamp
        let answer: VerifyAnswer
        /// The row whose answer was reused.
        let replayOf: ReplayShortcut.ReusedRow
    }

    /// Rows written in one database transaction at most.
    static let batchLimit = 64

    private let queue: WorkQueue<Row>

    init(queueLimit: QueueLimit) {
        queue = WorkQueue(limit: queueLimit)
    }

    func consumer(database: Database) -> QueueConsumers {
        QueueConsumers(named: "replay-audit", threads: 1, close: { [queue] in queue.close() }) { [self] in
            let connection = WorkerContext(database: database).connection
            while let batch = queue.pop(upTo: Self.batchLimit) {
                write(batch, connection: connection)
            }
        }
    }

    func record(_ row: Row) {
        guard queue.push(row, bytes: 256) else {
            return Log.event("verify: replay audit row not recorded: the queue is full")
        }
    }

    private func write(_ rows: [Row], connection: MariaDBConnection) {
        do {
            try connection.transactionRetryingDeadlocks(attempts: ReceiptDelivery.attempts) {
                var rest = rows[...]
                for size in RowChunks.exact(rows.count) {
                    try insert(rest.prefix(size), connection: connection)
                    rest = rest.dropFirst(size)
                }
            }
        } catch {
            Log.event("verify: \(rows.count) replay audit row(s) not recorded: \(error)")
        }
    }

    private func insert(_ rows: ArraySlice<Row>, connection: MariaDBConnection) throws(MariaDBError) {
        var parameters: [SQLValue] = []
        parameters.reserveCapacity(rows.count * 13)
        for row in rows {
            let request = row.request
            parameters += [
                .text(request.receipt.sha256Hex), .optional(request.orderID), .optional(request.transactionID),
                .optional(request.appVersion), .text(row.userID), .optional(row.clientAddress.map { String($0.prefix(45)) }),
                .optional(row.answer.environment?.rawValue), row.answer.appleStatus.map { .integer(Int64($0)) } ?? .null,
                .text(row.receivedAt.sql), .text(row.receivedAt.sql), .integer(Int64(row.replayOf.receiptID)),
                .text(request.receipt.replayKeyHex), row.replayOf.sameBytes ? .null : .asciiBytes(request.receipt.base64),
            ]
        }
        try connection.execute(
            """
            INSERT INTO receipts (sha256, order_id, transaction_id, app_version, user_id, client_ip, environment,
              apple_status, received_at, verified_at, replay_of, signed_key, receipt_data)
            VALUES \(SQLPlaceholders.rows(rows.count, columns: 13))
            """,
            parameters
        ).requireRows(rows.count, "INSERT INTO receipts (replays)")
    }
}
