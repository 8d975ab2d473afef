import IAPCore
import MariaDB

/// The database work of `POST /v1/transactions/verify`, on threads of its own
/// that take up to `batchLimit` requests at once: their audit rows in one
/// INSERT and one commit, then the admitted transactions delivered together
/// by `BatchDelivery` in one database transaction, as the receipts' delivery
/// threads do. A statement per request costs the database several times what
/// its rows cost (measured: 1,720/s one by one against 4,360/s for order
/// create). Those that cannot go together (a refund, a transaction already
/// there, two of one order) are delivered one by one.
///
/// Its queue is bounded (`QueueLimit`): a request it cannot take is answered
/// `retry_later` at once, unrecorded.
final class SignedTransactionBatches: Sendable {
    /// A request whose JWS has been checked, and where its answer goes.
    struct Job: Sendable {
        let row: SignedTransactionAudit.Row
        /// nil: the JWS was refused (400 `invalid_signed_data` once its row is recorded).
        let input: SignedTransactionDelivery.Input?
        let responder: Responder
    }

    /// Requests handled in one batch at most.
    static let batchLimit = 16

    private let queue: WorkQueue<Job>
    private let delivery: SignedTransactionDelivery

    init(delivery: SignedTransactionDelivery, queueLimit: QueueLimit) {
        self.queue = WorkQueue(limit: queueLimit, name: "signed_transactions")
        self.delivery = delivery
    }

    /// Starts `count` threads, each with a database connection of its own.
    func start(count: Int, database: Database) {
        for _ in 0..<count {
            startThread { [self] in
                let connection = WorkerContext(database: database).connection
                while let batch = queue.pop(upTo: Self.batchLimit) {
                    handle(batch, connection: connection)
                }
            }
        }
    }

    /// Queues a request, or answers `retry_later` when the queue is full.
    func submit(_ job: Job) {
        guard queue.push(job, bytes: job.row.jws.utf8.count) else {
            return job.responder.send(Self.notRecorded(job))
        }
    }

    private func handle(_ batch: [Job], connection: MariaDBConnection) {
        let audit = SignedTransactionAudit(connection: connection)
        let receiptIDs: [UInt64?]
        do {
            // Several statements (`RowChunks`) commit once; one is atomic by itself.
            let rows = batch.map(\.row)
            receiptIDs = try rows.count == 1 ? audit.record(rows) : connection.transaction { try audit.record(rows) }
        } catch {
            Log.event("transactions/verify: not recorded: \(error)")
            // One row the database refuses must not fail the others: each alone.
            receiptIDs = batch.count == 1 ? [nil] : batch.map { try? audit.record([$0.row]).first }
        }
        var admitted: [(input: SignedTransactionDelivery.Input, delivery: Delivery.Input, responder: Responder)] = []
        for (job, receiptID) in zip(batch, receiptIDs) {
            guard let receiptID else {
                job.responder.send(Self.notRecorded(job))
                continue
            }
            guard let input = job.input else {
                job.responder.send(.error(.invalidSignedData))
                continue
            }
            switch delivery.step(input, receiptID: receiptID) {
            case .answer(let answer):
                job.responder.send(.verify(answer))
            case .deliver(let deliveryInput):
                admitted.append((input, deliveryInput, job.responder))
            }
        }
        for (item, delivered) in zip(admitted, deliverTogether(admitted.map(\.delivery), connection: connection)) {
            let answer = delivered.map { delivery.answer(item.input, delivered: $0) }
                ?? delivery.deliverAlone(item.input, delivery: item.delivery, connection: connection)
            item.responder.send(.verify(answer))
        }
    }

    /// `BatchDelivery` for several admitted transactions; by item, its answers,
    /// or nil when it must go alone (left out, or the batch failed).
    private func deliverTogether(_ inputs: [Delivery.Input], connection: MariaDBConnection) -> [[TransactionAnswer]?] {
        let alone = [[TransactionAnswer]?](repeating: nil, count: inputs.count)
        guard inputs.count > 1 else { return alone }
        let items = inputs.map { input in
            BatchDelivery.Item(
                record: input.appleAnswerRecord,
                delivery: (
                    BatchPlan.Member(
                        receiptID: input.receiptID, userID: input.userID, orderID: input.orderID,
                        transactions: input.transactions),
                    input.environment))
        }
        let batch = BatchDelivery(connection: connection, catalog: delivery.settings.current.products)
        return (try? connection.transaction { try batch.record(items, at: .now()) }) ?? alone
    }

    /// The database could not take the audit row: nothing was checked further.
    private static func notRecorded(_ job: Job) -> Response {
        .verify(VerifyAnswer(
            status: .retryLater, environment: job.input?.environment, orderID: job.input?.order.orderID ?? job.row.orderID))
    }
}
