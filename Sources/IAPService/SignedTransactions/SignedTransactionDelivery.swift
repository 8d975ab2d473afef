import IAPCore
import MariaDB
internal import SignedData

/// docs/api.md "POST /v1/transactions/verify" steps 3 to 5 for a verified
/// transaction whose audit row is recorded: the bundle and the sandbox policy
/// (`SignedTransactionAdmission`), then delivery through the same code as a
/// receipt's transactions (`BatchDelivery`, `Delivery`), so that exactly-once
/// holds across both routes by the primary key of `transactions`.
struct SignedTransactionDelivery: Sendable {
    let bundleIDs: [String]
    let sandboxPolicy: SandboxPolicy
    let settings: SettingsCache

    /// A verified transaction and what the request resolved.
    struct Input: Sendable {
        let transaction: SignedTransaction
        /// The verified payload's object, as Apple signed it.
        let raw: JSONObject
        let order: SignedTransactionOrder
        let appVersion: String?

        /// The transaction as its delivery and its answer read it.
        var signed: SignedTransactionDeliveryStep.Transaction {
            SignedTransactionDeliveryStep.Transaction(
                transaction: transaction.appleTransaction(raw: raw), bundleID: transaction.bundleID,
                signedEnvironmentName: transaction.environment, payload: transaction.payload, order: order,
                appVersion: appVersion)
        }
    }

    /// What a verified transaction needs once its audit row is there.
    enum Step {
        /// Not delivered: answered as it is.
        case answer(VerifyAnswer)
        /// Admitted: delivered by `BatchDelivery` with others, or `deliverAlone`.
        case deliver(DeliveryInput)
    }

    /// Admits the transaction or says why not (`SignedTransactionDeliveryStep`), under the
    /// settings read last; a rejection is logged with its reason.
    func step(_ input: Input, receiptID: UInt64) -> Step {
        let rules = DeliveryDecision.Rules(bundleIDs: bundleIDs, sandboxPolicy: sandboxPolicy, settings: settings.current)
        switch SignedTransactionDeliveryStep(input.signed, receiptID: receiptID, rules: rules) {
        case .answer(let answer):
            return .answer(answer)
        case .rejected(let answer, let reason):
            Log.event("transactions/verify: rejected: \(reason)")
            return .answer(answer)
        case .deliver(let delivery):
            return .deliver(delivery)
        }
    }

    /// Delivers one admitted transaction in a database transaction of its own
    /// (any case: a refund, a transaction or an order another request holds).
    /// `andThen` runs in that database transaction with what the delivery did
    /// (`iapctl lookup --deliver` owes Apple a Finish Transaction for it).
    func deliverAlone(
        _ input: Input, delivery: DeliveryInput, connection: MariaDBConnection,
        andThen: ([TransactionAnswer]) throws -> Void = { _ in }
    ) -> VerifyAnswer {
        do {
            let answers = try connection.transactionRetryingDeadlocks(attempts: ReceiptDelivery.attempts) {
                let answers = try Delivery(connection: connection).deliverInTransaction(delivery)
                if input.transaction.revocationDate != nil {
                    try SignedTransactionAudit(connection: connection).recordRevocation(of: input.transaction)
                }
                try andThen(answers)
                return answers
            }
            return answer(input, delivered: answers)
        } catch {
            Log.event("transactions/verify: not delivered: \(error)")
            return retryLater(input)
        }
    }

    /// The answer once delivery did what `answers` says (`SignedTransactionDeliveryStep.Transaction.answer`).
    func answer(_ input: Input, delivered answers: [TransactionAnswer]) -> VerifyAnswer {
        input.signed.answer(delivered: answers)
    }

    func retryLater(_ input: Input) -> VerifyAnswer {
        input.signed.retryLater()
    }
}
