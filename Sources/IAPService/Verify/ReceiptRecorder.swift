import IAPCore
import MariaDB

/// Step 1 of a verification, on a thread of its own: the receipts the accept
/// threads hand over are recorded together, up to `batchLimit` rows in one
/// INSERT and one commit, and each then goes to its checker (`ReceiptChecker`:
/// Apple, or, under `server-api`, this process and then Apple). Under `local`
/// a receipt is checked here first and goes, not recorded yet, to
/// `CheckedReceiptBatches`, which records and delivers it in one database
/// transaction. A statement per receipt
/// costs the database several times what the row costs, and an accept thread
/// no longer waits for a commit before it reads the next request.
///
/// Receipts the accept threads did not find in the replay cache are looked up
/// here (but those checked here: under `local`), the whole batch in one query,
/// before they are recorded: those Apple
/// found valid before are answered from the database (`ReplayShortcut`) with
/// their replay's audit row (`ReplayAudit`), and do not go to Apple.
///
/// Its queue is bounded (`QueueLimit`): a receipt it cannot take is answered
/// `retry_later` at once, unrecorded. One recorded but refused by Apple's full
/// queue is answered `retry_later` too, and stays unverified for the app's
/// retry or `iapctl retry-pending`.
///
/// A receipt's bytes are stored once: the thread keeps the rows it wrote with
/// their bytes (`ReceiptBytesIndex`, in memory, no query), and a new row of the
/// same bytes names one of them (`bytes_in`) instead of storing them again.
final class ReceiptRecorder: Sendable {
    /// A receipt waiting to be recorded, and where its answer goes.
    private struct Job: Sendable {
        var receipt: ReceiptStore.NewReceipt
        let responder: Responder
        let deadline: Deadline
        /// The outcome of a receipt checked here before it is recorded (`local`).
        var outcome: AppleOutcome? = nil

    }

    /// Receipts recorded in one statement at most.
    static let batchLimit = 16
    /// Rows whose bytes the thread remembers (about 100 bytes each): more than
    /// the distinct receipts apps retry within minutes at thousands a second.
    static let bytesIndexCapacity = 16_384

    private let queue: WorkQueue<Job>
    private let checker: ReceiptChecker
    private let receiptDelivery: ReceiptDelivery
    /// Where receipts checked here go instead of being recorded here (`local`).
    private let checkedReceipts: CheckedReceiptBatches
    private let replays: ReplayCache
    private let replayAudit: ReplayAudit
    /// A verification's time from its request's arrival (`VerificationDeadline`).
    private let deadlineBudgetMs: Int

    init(
        checker: ReceiptChecker, receiptDelivery: ReceiptDelivery, checkedReceipts: CheckedReceiptBatches,
        replays: ReplayCache, replayAudit: ReplayAudit,
        queueLimit: QueueLimit, deadlineBudgetMs: Int
    ) {
        self.queue = WorkQueue(limit: queueLimit, name: "receipt_recorder")
        self.checker = checker
        self.receiptDelivery = receiptDelivery
        self.checkedReceipts = checkedReceipts
        self.replays = replays
        self.replayAudit = replayAudit
        self.deadlineBudgetMs = deadlineBudgetMs
    }

    /// The recording thread, with a database connection of its own.
    func consumer(database: Database) -> QueueConsumers {
        QueueConsumers(named: "recorder", threads: 1, close: { [queue] in queue.close() }) { [self] in
            let store = ReceiptStore(connection: WorkerContext(database: database).connection)
            var index = ReceiptBytesIndex(capacity: Self.bytesIndexCapacity)
            while let batch = queue.pop(upTo: Self.batchLimit) {
                let checked = batch.map(checkedWithoutApple)
                // A receipt checked here costs less to check again than the query that would spare it
                // (bench case l1: 35 µs of MariaDB's CPU per verification): a replay of one is checked,
                // and delivery answers it already_delivered.
                let toRecord = answerReplays(checked.filter { $0.outcome == nil }, connection: store.connection)
                for job in checked {
                    guard let outcome = job.outcome else { continue }
                    checkedReceipts.submit(CheckedReceiptBatches.Job(
                        receipt: job.receipt, outcome: outcome, responder: job.responder, deadline: job.deadline))
                }
                if !toRecord.isEmpty {
                    record(toRecord, store: store, index: &index)
                }
            }
        }
    }

    /// Queues the receipt of a request that must go to Apple, or answers
    /// `retry_later` when the queue is full.
    func record(_ receipt: ReceiptStore.NewReceipt, responder: Responder) {
        let deadline = Deadline(startNs: responder.receivedAtNs, budgetMs: deadlineBudgetMs)
        let job = Job(receipt: receipt, responder: responder, deadline: deadline)
        guard queue.push(job, bytes: receipt.request.receipt.base64.utf8.count) else {
            return responder.send(.verify(VerifyAnswer(status: .retryLater, orderID: receipt.request.orderID)))
        }
    }

    /// Answers the receipts of `batch` that are replays of a verification the
    /// database holds; the others, to be recorded. When the database cannot be
    /// read, all of them are recorded (if it can take them): asking Apple again
    /// delivers nothing twice.
    private func answerReplays(_ batch: [Job], connection: MariaDBConnection) -> [Job] {
        do {
            try ReplayShortcut.rememberEarlierAnswers(
                replayKeys: batch.map(\.receipt.request.receipt.replayKeyHex), connection: connection, cache: replays)
        } catch {
            Log.event("verify: earlier answers not read: \(error)")
            return batch
        }
        let shortcut = ReplayShortcut(connection: connection, cache: replays)
        return batch.filter { job in
            let receipt = job.receipt
            guard let replay = try? shortcut.answer(receipt.request, userID: receipt.userID) else { return true }
            job.responder.send(.verify(replay.answer))
            replayAudit.record(ReplayAudit.Row(
                request: receipt.request, userID: receipt.userID, clientAddress: receipt.clientAddress,
                receivedAt: receipt.receivedAt, answer: replay.answer, replayOf: replay.replayOf))
            return false
        }
    }

    /// `job` with its outcome when nothing but this process checks its
    /// receipt (`local`), its row's answer ready (`ReceiptStore.KnownAnswer`):
    /// the row is written complete, and no UPDATE of the 5 KB row follows
    /// unless its delivery does not happen (`ReceiptRowState.checkedHere`).
    private func checkedWithoutApple(_ job: Job) -> Job {
        guard let outcome = checker.outcomeWithoutApple(receiptBase64: job.receipt.request.receipt.base64) else {
            return job
        }
        var checked = job
        checked.outcome = outcome
        checked.receipt.knownAnswer = ReceiptStore.KnownAnswer(
            environment: outcome.environment, answer: outcome.lastAnswer, failedCheck: outcome.checkedHere?.failedCheck)
        return checked
    }

    /// Records the batch and sends each receipt to its checker.
    private func record(_ batch: [Job], store: ReceiptStore, index: inout ReceiptBytesIndex) {
        let receipts = batch.map(\.receipt)
        let receiptIDs: [UInt64?]
        do {
            receiptIDs = try store.record(receipts, index: &index)
        } catch {
            Log.event("verify: receipt not recorded: \(error)")
            // One row the database refuses must not fail the others: each alone.
            receiptIDs = receipts.count == 1 ? [nil] : receipts.map { try? store.record([$0], index: &index).first }
        }
        for (job, receiptID) in zip(batch, receiptIDs) {
            let request = job.receipt.request
            guard let receiptID else {
                // Nothing could be recorded: Apple is not called, nothing is delivered.
                job.responder.send(.verify(VerifyAnswer(status: .retryLater, orderID: request.orderID)))
                continue
            }
            let pending = ReceiptDelivery.Pending(
                request: request, userID: job.receipt.userID, receiptID: receiptID, deadline: job.deadline)
            let accepted = checker.check(receiptBase64: request.receipt.base64, deadline: job.deadline) {
                [receiptDelivery] outcome in receiptDelivery.finish(pending, outcome: outcome, responder: job.responder)
            }
            if !accepted {
                // Recorded and left unverified: the app's retry or retry-pending verifies it.
                job.responder.send(.verify(VerifyAnswer(status: .retryLater, orderID: request.orderID)))
            }
        }
    }
}
