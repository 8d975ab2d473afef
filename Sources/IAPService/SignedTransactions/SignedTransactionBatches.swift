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
/// `transaction_id` requests go through the same threads twice
/// (`SignedTransactionFetches`): their audit rows are written with the others,
/// then Apple is asked; Apple's answers come back to this queue, and the
/// admitted ones are delivered with the posted ones.
///
/// Its queue is bounded (`QueueLimit`): a request it cannot take is answered
/// `retry_later` at once, unrecorded.
final class SignedTransactionBatches: Sendable {
    /// A request whose JWS has been checked, and where its answer goes.
    struct Job: Sendable {
        let row: SignedTransactionAudit.Row
        let next: Next
        let responder: Responder

        /// What follows once the row is recorded.
        enum Next: Sendable {
            /// The transaction goes on to steps 3 to 5.
            case deliver(SignedTransactionDelivery.Input)
            /// This error is answered: the JWS was refused (400
            /// `invalid_signed_data`), or the request contradicts the order
            /// the transaction names (409 `order_user_mismatch`).
            case refuse(APIError)
        }

        var input: SignedTransactionDelivery.Input? {
            if case .deliver(let input) = next { return input }
            return nil
        }
    }

    /// What the threads take.
    enum Work: Sendable {
        /// A posted JWS: its row, then its delivery.
        case posted(Job)
        /// A `transaction_id` request: its row, then the question to Apple.
        case fetch(SignedTransactionFetches.Request)
        /// Apple's answer to one: the row completed, then as posted.
        case fetched(SignedTransactionFetches.Answer)

        /// Bytes counted against the queue's limit.
        var bytes: Int {
            switch self {
            case .posted(let job): return job.row.jws.utf8.count
            case .fetch(let fetch): return fetch.transactionID.utf8.count
            case .fetched(let answer): return (try? answer.result.get())?.utf8.count ?? 0
            }
        }
    }

    /// Requests handled in one batch at most.
    static let batchLimit = 16

    private let queue: WorkQueue<Work>
    private let delivery: SignedTransactionDelivery
    /// nil without the App Store Server API: no `.fetch` is ever submitted.
    private let fetches: SignedTransactionFetches?

    init(delivery: SignedTransactionDelivery, fetches: SignedTransactionFetches?, queueLimit: QueueLimit) {
        self.queue = WorkQueue(limit: queueLimit, name: "signed_transactions")
        self.delivery = delivery
        self.fetches = fetches
    }

    /// `count` threads, each with a database connection of its own.
    func consumers(count: Int, database: Database) -> QueueConsumers {
        QueueConsumers(named: "signed-batches", threads: count, close: { [queue] in queue.close() }) { [self] in
            let connection = WorkerContext(database: database).connection
            while let batch = queue.pop(upTo: Self.batchLimit) {
                handle(batch, connection: connection)
            }
        }
    }

    /// Queues a request, or answers `retry_later` when the queue is full.
    func submit(_ work: Work) {
        guard queue.push(work, bytes: work.bytes) else {
            return Self.notRecorded(work)
        }
    }

    private func handle(_ batch: [Work], connection: MariaDBConnection) {
        var posted: [Job] = []
        var fetchRequests: [SignedTransactionFetches.Request] = []
        var answers: [SignedTransactionFetches.Answer] = []
        for work in batch {
            switch work {
            case .posted(let job): posted.append(job)
            case .fetch(let fetch): fetchRequests.append(fetch)
            case .fetched(let answer): answers.append(answer)
            }
        }
        if fetchRequests.isEmpty, answers.isEmpty, recordAndDeliverAtOnce(posted, connection: connection) {
            return
        }
        let receiptIDs = record(posted.map(\.row) + fetchRequests.map(\.row), connection: connection)
        for (fetch, receiptID) in zip(fetchRequests, receiptIDs.dropFirst(posted.count)) {
            ask(fetch, receiptID: receiptID, connection: connection)
        }
        var recorded: [(input: SignedTransactionDelivery.Input, receiptID: UInt64, responder: Responder)] = []
        for (job, receiptID) in zip(posted, receiptIDs) {
            guard let receiptID else {
                Self.notRecorded(.posted(job))
                continue
            }
            let input: SignedTransactionDelivery.Input
            switch job.next {
            case .refuse(let error):
                job.responder.send(.error(error))
                continue
            case .deliver(let admissible):
                input = admissible
            }
            recorded.append((input, receiptID, job.responder))
        }
        for answer in answers {
            guard let fetches else {
                Self.notRecorded(.fetched(answer))  // never: only `fetches` makes answers
                continue
            }
            switch fetches.settle(answer, connection: connection) {
            case .answered(let response):
                answer.fetch.responder.send(response)
            case .deliver(let input):
                recorded.append((input, answer.receiptID, answer.fetch.responder))
            }
        }
        deliver(recorded, connection: connection)
    }

    /// The common batch, posted JWS only (one of them too), in one database
    /// transaction: their audit rows and the deliveries of those that may go
    /// together, with one commit where the general path needs two. False when that
    /// transaction did not commit (a transaction another request inserted
    /// meanwhile, a deadlock on every attempt): nothing of it is written, and
    /// the general path records and delivers them.
    private func recordAndDeliverAtOnce(_ posted: [Job], connection: MariaDBConnection) -> Bool {
        guard !posted.isEmpty else { return false }
        typealias Admitted = (input: SignedTransactionDelivery.Input, delivery: DeliveryInput, responder: Responder)
        var responses: [(Responder, Response)] = []
        var alone: [Admitted] = []
        do {
            try connection.transactionRetryingDeadlocks(attempts: ReceiptDelivery.attempts) {
                responses = []
                alone = []
                let receiptIDs = try SignedTransactionAudit(connection: connection).record(posted.map(\.row))
                var admitted: [Admitted] = []
                for (job, receiptID) in zip(posted, receiptIDs) {
                    let input: SignedTransactionDelivery.Input
                    switch job.next {
                    case .refuse(let error):
                        responses.append((job.responder, .error(error)))
                        continue
                    case .deliver(let admissible):
                        input = admissible
                    }
                    switch delivery.step(input, receiptID: receiptID) {
                    case .answer(let answer): responses.append((job.responder, .verify(answer)))
                    case .deliver(let deliveryInput): admitted.append((input, deliveryInput, job.responder))
                    }
                }
                let batch = BatchDelivery(connection: connection, catalog: delivery.settings.current.products)
                let delivered = try batch.record(admitted.map { BatchDelivery.Item(delivering: $0.delivery) }, at: .now())
                for (item, answers) in zip(admitted, delivered) {
                    if let answers {
                        responses.append((item.responder, .verify(delivery.answer(item.input, delivered: answers))))
                    } else {
                        alone.append(item)
                    }
                }
            }
        } catch {
            return false
        }
        Log.gathered {  // the batch's access lines in one write
            for (responder, response) in responses {
                responder.send(response)
            }
        }
        for item in alone {
            item.responder.send(.verify(delivery.deliverAlone(item.input, delivery: item.delivery, connection: connection)))
        }
        return true
    }

    /// Writes the audit rows, one statement for up to `RowChunks.largest`;
    /// by row, its id, or nil when the database refused it.
    private func record(_ rows: [SignedTransactionAudit.Row], connection: MariaDBConnection) -> [UInt64?] {
        guard !rows.isEmpty else { return [] }
        let audit = SignedTransactionAudit(connection: connection)
        do {
            // Several statements (`RowChunks`) commit once; one is atomic by itself.
            return try RowChunks.fitInOneStatement(rows.count)
                ? audit.record(rows) : connection.transaction { try audit.record(rows) }
        } catch {
            Log.event("transactions/verify: not recorded: \(error)")
            // One row the database refuses must not fail the others: each alone.
            return rows.count == 1 ? [nil] : rows.map { try? audit.record([$0]).first }
        }
    }

    /// Hands a recorded `transaction_id` request to Apple; its answer comes back to this queue.
    private func ask(_ fetch: SignedTransactionFetches.Request, receiptID: UInt64?, connection: MariaDBConnection) {
        guard let receiptID, let fetches else {
            return Self.notRecorded(.fetch(fetch))
        }
        let unasked = fetches.ask(fetch, receiptID: receiptID, connection: connection) { [self] answer in
            submit(.fetched(answer))
        }
        if let unasked {
            fetch.responder.send(fetches.unasked(fetch, why: unasked, receiptID: receiptID, connection: connection))
        }
    }

    /// Steps 3 to 5 for verified transactions whose rows are recorded.
    private func deliver(
        _ recorded: [(input: SignedTransactionDelivery.Input, receiptID: UInt64, responder: Responder)],
        connection: MariaDBConnection
    ) {
        var admitted: [(input: SignedTransactionDelivery.Input, delivery: DeliveryInput, responder: Responder)] = []
        for (input, receiptID, responder) in recorded {
            switch delivery.step(input, receiptID: receiptID) {
            case .answer(let answer):
                responder.send(.verify(answer))
            case .deliver(let deliveryInput):
                admitted.append((input, deliveryInput, responder))
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
    private func deliverTogether(_ inputs: [DeliveryInput], connection: MariaDBConnection) -> [[TransactionAnswer]?] {
        let alone = [[TransactionAnswer]?](repeating: nil, count: inputs.count)
        guard inputs.count > 1 else { return alone }
        let items = inputs.map(BatchDelivery.Item.init(delivering:))
        let batch = BatchDelivery(connection: connection, catalog: delivery.settings.current.products)
        // A batch that lost to another transaction runs again whole (Galera: certification).
        return (try? connection.transactionRetryingDeadlocks(attempts: ReceiptDelivery.attempts) {
            try batch.record(items, at: .now())
        }) ?? alone
    }

    /// The queue or the database could not take the work: `retry_later`, and
    /// nothing was checked further (a fetched answer's row stays open).
    private static func notRecorded(_ work: Work) {
        switch work {
        case .posted(let job):
            job.responder.send(.verify(
                job.input?.signed.retryLater() ?? VerifyAnswer(status: .retryLater, orderID: job.row.orderID)))
        case .fetch(let fetch):
            fetch.responder.send(.verify(VerifyAnswer(status: .retryLater, orderID: fetch.request.orderID)))
        case .fetched(let answer):
            answer.fetch.responder.send(.verify(VerifyAnswer(status: .retryLater, orderID: answer.fetch.request.orderID)))
        }
    }
}
