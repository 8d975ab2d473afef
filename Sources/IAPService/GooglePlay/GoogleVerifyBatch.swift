import IAPCore
import MariaDB

/// Several Google verifies written inside the caller's database transaction, as Apple's
/// verifications are (`BatchDelivery`): each decided (`GoogleVerifyWrite.decide`), their audit
/// rows in one INSERT, the purchases that may go together delivered with one statement per
/// table (`GoogleBatchDelivery`), the others one by one after them (`GooglePurchaseDelivery`),
/// which then find what the batch delivered.
struct GoogleVerifyBatch {
    let write: GoogleVerifyWrite

    /// By request, in order, what it answers once the transaction has committed.
    func write(
        _ requests: [(request: GooglePurchaseVerifier.Request, read: GooglePurchaseRead)]
    ) throws -> [GoogleVerifyWrite.Written] {
        let connection = write.connection
        let decided = try requests.map { try write.decide($0.request, read: $0.read) }
        let receiptIDs = try GooglePurchaseAudit(connection: connection).record(decided.map(\.audit))
        var written = [GoogleVerifyWrite.Written?](repeating: nil, count: requests.count)
        var delivering: [(index: Int, delivering: GoogleVerifyWrite.Delivering, input: GooglePurchaseDelivery.Input)] = []
        for (index, (decision, receiptID)) in zip(decided, receiptIDs).enumerated() {
            switch decision.outcome {
            case .answer(let answer):
                written[index] = answer
            case .deliver(let admitted):
                delivering.append((index, admitted, admitted.input(receiptID: receiptID)))
            }
        }
        let together = try GoogleBatchDelivery(connection: connection, catalog: write.settings.products)
            .deliver(delivering.map(\.input))
        for (item, delivered) in zip(delivering, together) {
            let answer = try delivered
                ?? GooglePurchaseDelivery(connection: connection).deliverInTransaction(item.input)
            written[item.index] = item.delivering.written(answer)
        }
        return written.map { $0! }
    }
}
