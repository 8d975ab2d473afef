import IAPCore
import MariaDB

/// Clients retry a lot. A receipt Apple found valid before (known by what its
/// signature covers, `ReceiptData.replayKeyHex`, so that a copy re-encoded
/// around the signature is the same receipt), and whose every transaction is in the database already, is
/// answered from the database: Apple's quota and latency are not ours to
/// spend, and asking again could not deliver anything.
///
/// Unless the request names a transaction that answer lacks: Apple's answer to
/// the same bytes grows over time (a renewed subscription shows up in
/// `latest_receipt_info`), so that request goes to Apple, which may show it
/// now; answered from the earlier answer it would be `pending` forever.
///
/// Such a request's audit row (`ReplayAudit`) names the row whose answer it
/// reused instead of storing the receipt's bytes again.
///
/// The accept threads look in memory only (`ReplayCache`): a receipt they do
/// not find there is most often new, and a query per request to learn so cost
/// the database a statement per verification. `ReceiptRecorder` asks the
/// database for the whole batch it records, in one query
/// (`rememberEarlierAnswers`), and answers the replays it finds (answers from
/// before a restart, or of another instance) as the accept threads do.
struct ReplayShortcut {
    let connection: MariaDBConnection
    let cache: ReplayCache

    /// The earlier row whose answer a replay reused.
    struct ReusedRow: Sendable {
        let receiptID: UInt64
        /// That row's receipt has the replay's very bytes. Else the replay is
        /// another encoding of it (the same replay key), and its audit row
        /// keeps its own bytes, so that every row's bytes are its `sha256`'s.
        let sameBytes: Bool
    }

    /// The answer without Apple and the row whose answer it reused, or nil
    /// when the request must go to Apple (or `cache` does not know its key).
    func answer(_ request: VerifyRequest, userID: String) throws -> (answer: VerifyAnswer, replayOf: ReusedRow)? {
        guard let earlier = cache[request.receipt.replayKeyHex],
              let receipt = earlier.reply.receipt
        else { return nil }
        let reply = earlier.reply
        let transactions = ReceiptTransactions(reply: reply, namedTransactionID: request.transactionID)
        guard !transactions.transactions.isEmpty, transactions.namedTransactionPresent else { return nil }
        let store = TransactionStore(connection: connection)
        var answers: [TransactionAnswer] = []
        for transaction in transactions.transactions {
            guard let stored = try store.stored(transaction.transactionID) else { return nil }
            let state: TransactionState
            switch stored.state {
            case "delivered": state = .alreadyDelivered
            case "refunded": state = .refunded
            default: return nil
            }
            let shownOrderID = stored.userID == userID ? stored.orderID : nil
            answers.append(TransactionAnswer(transaction: transaction, state: state, orderID: shownOrderID))
        }
        let status = VerifyStatus.finalStatus(
            states: answers.map(\.state), namedTransactionID: request.transactionID, namedTransactionPresent: true)
        let answer = VerifyAnswer(
            status: status, environment: earlier.environment, appleStatus: reply.status, orderID: request.orderID,
            app: receipt, transactions: answers)
        return (answer, ReusedRow(receiptID: earlier.receiptID, sameBytes: earlier.sha256 == request.receipt.sha256Hex))
    }

    /// Puts in `cache` Apple's answer to the first completed verification of
    /// each of these receipts (by replay key) that Apple found valid (later ones name
    /// the same transactions), when the database has one: one statement for up
    /// to `RowChunks.largest` receipts. The index is forced: the optimizer
    /// would otherwise walk the primary key through the whole table.
    static func rememberEarlierAnswers(
        replayKeys: [String], connection: MariaDBConnection, cache: ReplayCache
    ) throws(MariaDBError) {
        let unknown = Array(Set(replayKeys.filter { cache[$0] == nil }))
        for chunk in RowChunks.padded(unknown) {
            let rows = try connection.execute(
                """
                SELECT earlier.signed_key, earlier.environment, earlier.apple_response, earlier.receipt_id, earlier.sha256
                FROM receipts earlier JOIN (
                  SELECT MIN(receipt_id) AS receipt_id FROM receipts FORCE INDEX (receipts_signed_key)
                  WHERE signed_key IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ", ")))
                    AND verified_at IS NOT NULL AND apple_status IN (0, 21006) AND apple_response IS NOT NULL
                  GROUP BY signed_key
                ) AS earliest USING (receipt_id)
                """,
                chunk.map { .text($0) }
            ).rows
            for row in rows {
                guard let replayKey = row[0], let environment = row[1].flatMap(AppleEnvironment.init(rawValue:)),
                      let answer = row[2], let receiptID = row[3].flatMap({ UInt64($0) }), let sha256 = row[4],
                      let json = try? JSONParser.parse(Array(answer.utf8)), let reply = try? AppleReply.parse(json)
                else { continue }
                cache.insert(
                    ReplayCache.Entry(receiptID: receiptID, sha256: sha256, environment: environment, reply: reply), for: replayKey,
                    answerBytes: answer.utf8.count)
            }
        }
    }
}
