import IAPCore
import MariaDB

/// Receipts checked here (`IAP_RECEIPT_VERIFIER=local`), recorded and
/// delivered in one database transaction, one commit, by threads of their own,
/// as signed transactions are (`SignedTransactionBatches`): the recorder's
/// INSERT and a delivery thread's transaction were two commits per batch,
/// twice the log writes of a signed transaction's, and one recorder thread
/// waiting for both held the throughput down. Those `BatchDelivery` leaves out
/// are delivered one by one once the batch has committed; a batch whose
/// transaction fails is recorded and handed to the delivery threads as
/// receipts Apple checked (`ReceiptDelivery.finish`).
///
/// Its queue is bounded (`QueueLimit`): a receipt it cannot take is answered
/// `retry_later` at once, unrecorded, as the recorder's own queue does.
final class CheckedReceiptBatches: Sendable {
    /// A receipt checked here, not recorded yet, and where its answer goes.
    struct Job: Sendable {
        /// With its answer (`ReceiptStore.KnownAnswer`).
        let receipt: ReceiptStore.NewReceipt
        let outcome: AppleOutcome
        let responder: Responder
        let deadline: Deadline

        /// The row's state once written: a refused receipt's is complete.
        var row: ReceiptRowState {
            outcome.checkedHere?.failedCheck == nil ? .checkedHere : .complete
        }
    }

    /// Threads, each with a database connection of its own: two, as for
    /// signed transactions, so that one's commit does not hold the other back.
    static let threads = 2

    private let queue: WorkQueue<Job>
    private let receiptDelivery: ReceiptDelivery

    init(receiptDelivery: ReceiptDelivery, queueLimit: QueueLimit) {
        self.queue = WorkQueue(limit: queueLimit, name: "checked_receipts")
        self.receiptDelivery = receiptDelivery
    }

    /// Its threads; each remembers the rows whose bytes it stored (`ReceiptBytesIndex`), as the
    /// recorder does.
    func consumers(database: Database) -> QueueConsumers {
        QueueConsumers(named: "checked-here", threads: Self.threads, close: { [queue] in queue.close() }) { [self] in
            let store = ReceiptStore(connection: WorkerContext(database: database).connection)
            var index = ReceiptBytesIndex(capacity: ReceiptRecorder.bytesIndexCapacity)
            while let batch = queue.pop(upTo: ReceiptDelivery.batchLimit) {
                // Past its deadline nothing is delivered (`VerificationDeadline`): the delivery
                // threads answer it retry_later and reopen its row for retry-pending.
                let now = SystemClock.monotonicNanoseconds()
                let onTime = batch.filter { !$0.deadline.isPast(nowNs: now) }
                if !onTime.isEmpty, !recordAndDeliverAtOnce(onTime, store: store, index: &index) {
                    recordThenFinish(onTime, store: store, index: &index)
                }
                recordThenFinish(batch.filter { $0.deadline.isPast(nowNs: now) }, store: store, index: &index)
            }
        }
    }

    /// Queues a receipt checked here, or answers `retry_later` when the queue is full.
    func submit(_ job: Job) {
        guard queue.push(job, bytes: job.receipt.request.receipt.base64.utf8.count) else {
            return job.responder.send(.verify(VerifyAnswer(status: .retryLater, orderID: job.receipt.request.orderID)))
        }
    }

    /// The batch's rows and deliveries in one transaction; false when it
    /// failed, and nothing of it is written or answered.
    private func recordAndDeliverAtOnce(_ batch: [Job], store: ReceiptStore, index: inout ReceiptBytesIndex) -> Bool {
        let connection = store.connection
        let receipts = batch.map(\.receipt)
        let placements = ReceiptStore.place(receipts, in: &index)
        var receiptIDs: [UInt64] = []
        var answered: [(Responder, VerifyAnswer)] = []
        var alone: [(ReceiptDelivery.Pending, Job)] = []
        do {
            try connection.transactionRetryingDeadlocks(attempts: ReceiptDelivery.attempts) {
                answered = []
                alone = []
                receiptIDs = try store.recordInTransaction(receipts, placed: placements)
                let pending = zip(batch, receiptIDs).map(Self.pending)
                let steps = zip(pending, batch).map { receiptDelivery.step($0, outcome: $1.outcome) }
                let delivered = try BatchDelivery(connection: connection, catalog: receiptDelivery.settings.current.products)
                    .record(steps.map(\.batchItem), at: .now())
                for (position, transactions) in delivered.enumerated() {
                    guard let transactions else {
                        alone.append((pending[position], batch[position]))
                        continue
                    }
                    answered.append((
                        batch[position].responder,
                        steps[position].answer(request: pending[position].request, delivered: transactions)))
                }
            }
        } catch {
            return false
        }
        ReceiptStore.remember(receipts, placed: placements, ids: receiptIDs, in: &index)
        Log.gathered {  // the batch's access lines in one write
            for (responder, answer) in answered {
                responder.send(.verify(answer))
            }
        }
        for (pending, job) in alone {
            job.responder.send(.verify(receiptDelivery.answer(pending, outcome: job.outcome, connection: connection)))
        }
        return true
    }

    /// Each row alone, then to the delivery threads; one the database refuses
    /// is answered `retry_later`, unrecorded.
    private func recordThenFinish(_ batch: [Job], store: ReceiptStore, index: inout ReceiptBytesIndex) {
        for job in batch {
            guard let receiptID = try? store.record([job.receipt], index: &index).first else {
                job.responder.send(.verify(VerifyAnswer(status: .retryLater, orderID: job.receipt.request.orderID)))
                continue
            }
            let pending = Self.pending(job, receiptID: receiptID)
            if !receiptDelivery.finish(pending, outcome: job.outcome, responder: job.responder) {
                ReceiptDelivery.reopen([pending], connection: store.connection)
            }
        }
    }

    private static func pending(_ job: Job, receiptID: UInt64) -> ReceiptDelivery.Pending {
        ReceiptDelivery.Pending(
            request: job.receipt.request, userID: job.receipt.userID, receiptID: receiptID, deadline: job.deadline,
            row: job.row)
    }
}
