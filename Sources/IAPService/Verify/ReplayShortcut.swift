import IAPCore
import MariaDB

/// Clients retry a lot. A receipt whose exact bytes (by SHA-256) Apple found
/// valid before, and whose every transaction is in the database already, is
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
struct ReplayShortcut {
    let connection: MariaDBConnection
    let cache: ReplayCache

    /// The answer without Apple and the row whose answer it reused, or nil
    /// when the request must go to Apple.
    func answer(_ request: VerifyRequest, userID: String) throws -> (answer: VerifyAnswer, replayOf: UInt64)? {
        guard let earlier = try earlierAnswer(sha256: request.receipt.sha256Hex),
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
        return (answer, earlier.receiptID)
    }

    /// Apple's earlier answer to these bytes: from memory, else from the
    /// database (and then remembered).
    private func earlierAnswer(sha256: String) throws -> ReplayCache.Entry? {
        if let cached = cache[sha256] { return cached }
        guard let stored = try ReceiptStore(connection: connection).firstValidAnswer(sha256: sha256),
              let json = try? JSONParser.parse(stored.answer), let reply = try? AppleReply.parse(json)
        else { return nil }
        let entry = ReplayCache.Entry(receiptID: stored.receiptID, environment: stored.environment, reply: reply)
        cache.insert(entry, for: sha256, answerBytes: stored.answer.count)
        return entry
    }
}
