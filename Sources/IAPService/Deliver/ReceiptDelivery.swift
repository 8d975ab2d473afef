import IAPCore
import MariaDB

/// A receipt's delivery once Apple (or the check here) has spoken (docs/api.md
/// "POST /v1/receipts/verify" steps 3 to 6): the receipts waiting for it, and
/// the delivery threads that record Apple's answer, check the bundle and the
/// sandbox policy (`ReceiptDeliveryStep`), deliver and answer.
final class ReceiptDelivery: Sendable {
    /// A verification whose receipt is recorded and on its way to Apple.
    struct Pending: Sendable {
        let request: VerifyRequest
        let userID: String
        let receiptID: UInt64
        /// Past it, nothing is delivered (`VerificationDeadline`); none for retry-pending.
        var deadline = Deadline.never
        /// What the receipt's row holds: `bare` when Apple is asked after it
        /// was written; a receipt checked here is written complete
        /// (`ReceiptStore.KnownAnswer`), and reopened if it is not delivered.
        var row = ReceiptRowState.bare
    }

    /// Apple's answer to a pending verification, waiting for a delivery thread.
    /// A class: a batch is filtered and zipped on its way, and copying the
    /// struct retained each of its dozens of references every time (`perf`).
    private final class Answered: Sendable {
        let pending: Pending
        let outcome: AppleOutcome
        let responder: Responder

        init(pending: Pending, outcome: AppleOutcome, responder: Responder) {
            self.pending = pending
            self.outcome = outcome
            self.responder = responder
        }
    }

    private let queue: WorkQueue<Answered>
    private let bundleIDs: [String]
    private let sandboxPolicy: SandboxPolicy
    let settings: SettingsCache

    /// `queueLimit`: Apple's answers waiting for a delivery thread, at most.
    init(bundleIDs: [String], sandboxPolicy: SandboxPolicy, settings: SettingsCache, queueLimit: QueueLimit = QueueLimit()) {
        self.queue = WorkQueue(limit: queueLimit, name: "delivery", backlogThreshold: Self.backlogThreshold)
        self.bundleIDs = bundleIDs
        self.sandboxPolicy = sandboxPolicy
        self.settings = settings
    }

    /// Apple's answers waiting beyond which the reserve threads help: above what
    /// 64 clients at once can leave waiting, so that steady traffic never wakes them.
    static let backlogThreshold = 128

    /// Apple's answers a delivery thread records in one database transaction:
    /// one commit (one log flush) and one START/COMMIT pair for them all.
    static let batchLimit = 16

    /// Runs of a database transaction that a deadlock or a lock wait timeout
    /// rolled back, in all, before the request answers `retry_later`.
    static let attempts = 3

    /// `count` delivery threads, and `reserve` more that take answers only
    /// while over `backlogThreshold` wait. Measured on two cores: with 64 calls in
    /// flight, 8 threads delivering at once made new-receipt verification ~20%
    /// slower than 4 (contention); with 2,000 calls in flight and 2 s latency, 4
    /// let answers queue up (p50 2.2 s, 290-320 MiB) where 8 kept up. And the
    /// fewer threads take the answers, the more each batch holds: at 64 calls
    /// in flight (simulator at 0 ms), statements per verification went from
    /// 1.66 with 4 threads to 1.10 with 2 and 0.77 with 1, and iap-fcgi's CPU
    /// per verification from 230 to 200 and 186-195 µs (2026-11-24). So one
    /// thread delivers, and 7 join when answers queue up.
    func workers(count: Int, reserve: Int, database: Database) -> [QueueConsumers] {
        [(count, false), (reserve, true)].map { threads, isReserve in
            QueueConsumers(named: "delivery", threads: threads, close: { [queue] in queue.close() }) { [self] in
                let worker = WorkerContext(database: database)
                while let batch = isReserve
                    ? queue.popBacklog(upTo: Self.batchLimit) : queue.pop(upTo: Self.batchLimit)
                {
                    // Each group's access lines go out in one write once it is answered.
                    let now = SystemClock.monotonicNanoseconds()
                    let late = batch.filter { $0.pending.deadline.isPast(nowNs: now) }
                    Self.reopen(late.map(\.pending), connection: worker.connection)
                    Log.gathered {
                        for late in late {
                            late.responder.send(.verify(Self.retryLater(late.pending, outcome: late.outcome)))
                        }
                    }
                    let onTime = batch.filter { !$0.pending.deadline.isPast(nowNs: now) }
                    let answers = onTime.isEmpty ? [] : self.answers(onTime, connection: worker.connection)
                    Log.gathered {
                        for (answered, answer) in zip(onTime, answers) {
                            answered.responder.send(.verify(answer))
                        }
                    }
                }
            }
        }
    }

    /// Called on Apple's thread: queues the rest of the work. When the deadline
    /// stopped the calls to Apple, or the queue is full, the request is answered
    /// `retry_later` at once, nothing is recorded, and the receipt stays
    /// unverified for a retry. (So is one whose deadline passes while it waits:
    /// nothing is delivered after it.)
    /// - Returns: false when the request was answered `retry_later` at once.
    @discardableResult
    func finish(_ pending: Pending, outcome: AppleOutcome, responder: Responder) -> Bool {
        let bytes = pending.request.receipt.base64.utf8.count + (outcome.lastAnswer?.count ?? 0)
        guard !outcome.stoppedByDeadline,
            queue.push(Answered(pending: pending, outcome: outcome, responder: responder), bytes: bytes)
        else {
            responder.send(.verify(Self.retryLater(pending, outcome: outcome)))
            return false
        }
        return true
    }

    /// The rows of `pending` written complete whose delivery will not happen,
    /// reopened for retry-pending (`ReceiptRowState.checkedHere`). A
    /// database that refuses leaves them to the app's retry.
    static func reopen(_ pending: [Pending], connection: MariaDBConnection) {
        let receiptIDs = pending.filter { $0.row == .checkedHere }.map(\.receiptID)
        guard !receiptIDs.isEmpty else { return }
        do {
            try ReceiptStore(connection: connection).reopen(receiptIDs)
        } catch {
            Log.event("verify: receipts \(receiptIDs) checked here, not delivered, not reopened: \(error)")
        }
    }

    /// Steps 3 to 6 for several verifications in one database transaction,
    /// answered once it has committed (`BatchDelivery`). Those that cannot go
    /// together, or all of them when the batch fails (a row another request
    /// inserted meanwhile, or a deadlock on every attempt), are done again each
    /// on its own, so that one cannot fail the others.
    private func answers(_ batch: [Answered], connection: MariaDBConnection) -> [VerifyAnswer] {
        guard batch.count > 1 else {
            return batch.map { answer($0.pending, outcome: $0.outcome, connection: connection) }
        }
        let steps = batch.map { step($0.pending, outcome: $0.outcome) }
        let delivery = BatchDelivery(connection: connection, catalog: settings.current.products)
        // A batch that lost to another transaction runs again whole; one whose
        // rows another request inserted meanwhile goes one by one.
        let recorded = (try? connection.transactionRetryingDeadlocks(attempts: Self.attempts) {
            try delivery.record(steps.map(\.batchItem), at: .now())
        }) ?? Array(repeating: nil, count: batch.count)
        return zip(batch, zip(steps, recorded)).map { answered, stepAndRecord in
            let (step, transactions) = stepAndRecord
            guard let transactions else {
                return answer(answered.pending, outcome: answered.outcome, connection: connection)
            }
            return step.answer(request: answered.pending.request, delivered: transactions)
        }
    }

    /// Steps 3 to 6 on `connection`, in a database transaction of their own, for
    /// an outcome from Apple. A deadlock or a lock wait timeout rolls the work
    /// back and it runs again, up to `attempts` in all; when the
    /// database cannot take it, the answer is `retry_later`.
    func answer(_ pending: Pending, outcome: AppleOutcome, connection: MariaDBConnection) -> VerifyAnswer {
        do {
            return try connection.transactionRetryingDeadlocks(attempts: Self.attempts) {
                try answerRecording(pending, outcome: outcome, connection: connection)
            }
        } catch {
            Log.event("verify: Apple's answer not recorded: \(error)")
            Self.reopen([pending], connection: connection)
            return Self.retryLater(pending, outcome: outcome)
        }
    }

    /// What a verification whose outcome could not be recorded answers: the
    /// receipt stays unverified, and a later retry verifies it again.
    private static func retryLater(_ pending: Pending, outcome: AppleOutcome) -> VerifyAnswer {
        DeliveryDecision.retryLater(orderID: pending.request.orderID, outcome: outcome.decisionOutcome)
    }

    /// `ReceiptDeliveryStep` for `pending`, under the settings read last.
    func step(_ pending: Pending, outcome: AppleOutcome) -> ReceiptDeliveryStep {
        let rules = DeliveryDecision.Rules(bundleIDs: bundleIDs, sandboxPolicy: sandboxPolicy, settings: settings.current)
        return ReceiptDeliveryStep(
            outcome.decisionOutcome, request: pending.request, userID: pending.userID, receiptID: pending.receiptID,
            row: pending.row, rules: rules)
    }

    /// Records Apple's answer and delivers, inside the caller's database
    /// transaction; throws what the database throws.
    private func answerRecording(
        _ pending: Pending, outcome: AppleOutcome, connection: MariaDBConnection
    ) throws -> VerifyAnswer {
        switch step(pending, outcome: outcome) {
        case .record(let record, let answer):
            if let record { try ReceiptStore(connection: connection).recordAppleAnswers([record], at: .now()) }
            return answer
        case .deliver(let input, let admitted):
            let answers = try Delivery(connection: connection).deliverInTransaction(input)
            return admitted.answer(request: pending.request, delivered: answers)
        }
    }
}

extension ReceiptDeliveryStep {
    /// The step as one verification of a `BatchDelivery`.
    var batchItem: BatchDelivery.Item {
        switch self {
        case .record(let record, _):
            return BatchDelivery.Item(record: record, delivery: nil)
        case .deliver(let input, _):
            return BatchDelivery.Item(delivering: input)
        }
    }
}

extension DeliveryDecision.Rules {
    /// The rules of this service's bundles and sandbox policy under `settings`, the settings
    /// read last (unknown until the `settings` table has been read once).
    init(bundleIDs: [String], sandboxPolicy: SandboxPolicy, settings: SettingsCache.Snapshot) {
        self.init(
            bundleIDs: bundleIDs, sandboxPolicy: sandboxPolicy, settingsAreKnown: settings.isLoaded,
            reviewVersion: settings.reviewVersion, sandboxUsers: settings.sandboxUsers)
    }
}

extension AppleOutcome {
    /// The outcome as `DeliveryDecision` reads it.
    var decisionOutcome: DeliveryDecision.Outcome {
        DeliveryDecision.Outcome(
            verdict: verdict, environment: environment, lastAnswer: lastAnswer, checkedHere: checkedHere != nil,
            failedCheck: checkedHere?.failedCheck)
    }
}
