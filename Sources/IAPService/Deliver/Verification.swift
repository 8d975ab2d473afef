import IAPCore
import MariaDB

/// The verification after Apple has spoken (API.md steps 3 to 6), on the
/// delivery threads: record Apple's answer, check the bundle and the sandbox
/// policy, deliver, answer.
final class Verification: Sendable {
    /// A verification whose receipt is recorded and on its way to Apple.
    struct Pending: Sendable {
        let request: VerifyRequest
        let userID: String
        let receiptID: UInt64
    }

    private let queue: WorkQueue<@Sendable (WorkerContext) -> Void>
    private let bundleIDs: [String]
    private let sandboxPolicy: SandboxPolicy
    private let settings: SettingsCache

    init(bundleIDs: [String], sandboxPolicy: SandboxPolicy, settings: SettingsCache) {
        self.queue = WorkQueue(backlogThreshold: Self.backlogThreshold)
        self.bundleIDs = bundleIDs
        self.sandboxPolicy = sandboxPolicy
        self.settings = settings
    }

    /// Apple's answers waiting beyond which the reserve threads help: above what
    /// 64 clients at once can leave waiting, so that steady traffic never wakes them.
    static let backlogThreshold = 128

    /// Starts `count` delivery threads, and `reserve` more that take answers only
    /// while over `backlogThreshold` wait. Measured on two cores: with 64 calls in
    /// flight, 8 threads delivering at once made new-receipt verification ~20%
    /// slower than 4 (contention); with 2,000 calls in flight and 2 s latency, 4
    /// let answers queue up (p50 2.2 s, 290-320 MiB) where 8 kept up.
    func startWorkers(count: Int, reserve: Int, database: Database) {
        for index in 0..<(count + reserve) {
            let isReserve = index >= count
            startThread { [queue] in
                let worker = WorkerContext(database: database)
                while let job = isReserve ? queue.popBacklog() : queue.pop() {
                    job(worker)
                }
            }
        }
    }

    /// Called on Apple's thread: queues the rest of the work.
    func finish(_ pending: Pending, outcome: AppleOutcome, responder: Responder) {
        queue.push { [self] worker in
            responder.send(.verify(answer(pending, outcome: outcome, connection: worker.connection)))
        }
    }

    /// Steps 3 to 6 on `connection`, for an outcome from Apple.
    func answer(_ pending: Pending, outcome: AppleOutcome, connection: MariaDBConnection) -> VerifyAnswer {
        let receipts = ReceiptStore(connection: connection)
        let orderID = pending.request.orderID
        switch outcome.verdict {
        case .unavailable(let appleStatus):
            // Left without verified_at: a later retry verifies it again.
            try? receipts.recordAppleAnswer(
                receiptID: pending.receiptID, environment: appleStatus == nil ? nil : outcome.environment,
                appleStatus: appleStatus, answer: outcome.lastAnswer, completed: false, at: .now())
            return VerifyAnswer(
                status: .retryLater, environment: appleStatus == nil ? nil : outcome.environment,
                appleStatus: appleStatus, orderID: orderID)
        case .invalid(let appleStatus):
            return recordingCompletion(pending, outcome: outcome, appleStatus: appleStatus, receipts: receipts) {
                VerifyAnswer(status: .notPaid, environment: outcome.environment, appleStatus: appleStatus, orderID: orderID)
            }
        case .valid(let reply, let environment):
            return deliver(pending, reply: reply, environment: environment, outcome: outcome, connection: connection)
        }
    }

    private func deliver(
        _ pending: Pending, reply: AppleReply, environment: AppleEnvironment, outcome: AppleOutcome,
        connection: MariaDBConnection
    ) -> VerifyAnswer {
        let request = pending.request
        let receipts = ReceiptStore(connection: connection)
        guard let receipt = reply.receipt else {
            return recordingCompletion(pending, outcome: outcome, appleStatus: reply.status, receipts: receipts) {
                VerifyAnswer(status: .notPaid, environment: environment, appleStatus: reply.status, orderID: request.orderID)
            }
        }
        let transactions = ReceiptTransactions(reply: reply, namedTransactionID: request.transactionID)
        let snapshot = settings.current
        let admission = Admission.admit(
            receipt: receipt, environment: environment, bundleIDs: bundleIDs, policy: sandboxPolicy,
            reviewVersion: snapshot.reviewVersion, sandboxUsers: snapshot.sandboxUsers,
            appVersion: request.appVersion, userID: pending.userID)
        if case .rejected = admission {
            return recordingCompletion(pending, outcome: outcome, appleStatus: reply.status, receipts: receipts) {
                VerifyAnswer(
                    status: .rejected, environment: environment, appleStatus: reply.status, orderID: request.orderID,
                    app: receipt,
                    transactions: transactions.transactions.map {
                        TransactionAnswer(transaction: $0, state: .rejected, orderID: nil)
                    })
            }
        }
        do {
            let answers = try Delivery(connection: connection).deliver(Delivery.Input(
                receiptID: pending.receiptID, userID: pending.userID, orderID: request.orderID,
                environment: environment, appleAnswer: outcome.lastAnswer, appleStatus: reply.status,
                transactions: transactions))
            let status = VerifyStatus.finalStatus(
                states: answers.map(\.state), namedTransactionID: request.transactionID,
                namedTransactionPresent: transactions.namedTransactionPresent)
            let boundOrderID = answers.first { $0.state == .delivered && $0.orderID == request.orderID }?.orderID
            let firstDelivered = answers.first { $0.state == .delivered }?.orderID
            return VerifyAnswer(
                status: status, environment: environment, appleStatus: reply.status,
                orderID: boundOrderID ?? firstDelivered ?? request.orderID, app: receipt, transactions: answers)
        } catch {
            Log.event("verify: delivery not recorded: \(error)")
            return VerifyAnswer(status: .retryLater, environment: environment, appleStatus: reply.status, orderID: request.orderID)
        }
    }

    /// Records Apple's final answer, then answers `answer`; `retry_later` when
    /// the database cannot take it.
    private func recordingCompletion(
        _ pending: Pending, outcome: AppleOutcome, appleStatus: Int, receipts: ReceiptStore,
        _ answer: () -> VerifyAnswer
    ) -> VerifyAnswer {
        do {
            try receipts.recordAppleAnswer(
                receiptID: pending.receiptID, environment: outcome.environment, appleStatus: appleStatus,
                answer: outcome.lastAnswer, completed: true, at: .now())
            return answer()
        } catch {
            Log.event("verify: Apple's answer not recorded: \(error)")
            return VerifyAnswer(status: .retryLater, environment: outcome.environment, appleStatus: appleStatus,
                                orderID: pending.request.orderID)
        }
    }
}
