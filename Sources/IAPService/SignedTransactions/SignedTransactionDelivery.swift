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

        /// Where the rows place it (`Xcode`, `LocalTesting`: `Sandbox`).
        var environment: AppleEnvironment? {
            signedEnvironment?.deliveryEnvironment
        }

        /// The environment Apple signed, which the answer shows as it is.
        var signedEnvironment: SignedTransactionAdmission.Environment? {
            SignedTransactionAdmission.Environment(rawValue: transaction.environment)
        }

        var app: AppleReceipt {
            AppleReceipt(format: .appReceipt, bundleID: transaction.bundleID, applicationVersion: nil, appItemID: nil, inApp: [])
        }
    }

    /// What a verified transaction needs once its audit row is there.
    enum Step {
        /// Not delivered: answered as it is.
        case answer(VerifyAnswer)
        /// Admitted: delivered by `BatchDelivery` with others, or `deliverAlone`.
        case deliver(DeliveryInput)
    }

    /// Admits the transaction or says why not.
    func step(_ input: Input, receiptID: UInt64) -> Step {
        let signed = input.transaction
        let transaction = signed.appleTransaction(raw: input.raw)
        let snapshot = settings.current
        let admission = SignedTransactionAdmission.admit(
            bundleID: signed.bundleID, environment: signed.environment, bundleIDs: bundleIDs, policy: sandboxPolicy,
            settingsAreKnown: snapshot.isLoaded, reviewVersion: snapshot.reviewVersion,
            sandboxUsers: snapshot.sandboxUsers, appVersion: input.appVersion, userID: input.order.userID)
        switch admission {
        case .settingsUnknown:
            // Rejecting it would tell the app to finish an App Review purchase: the app retries.
            return .answer(retryLater(input))
        case .rejected(let reason):
            Log.event("transactions/verify: rejected: \(reason)")
            return .answer(VerifyAnswer(
                status: .rejected, environment: input.environment, orderID: input.order.orderID, app: input.app,
                transactions: [TransactionAnswer(transaction: transaction, state: .rejected, orderID: nil)],
                signedEnvironment: input.signedEnvironment))
        case .admitted:
            return .deliver(DeliveryInput(
                receiptID: receiptID, userID: input.order.userID, orderID: input.order.orderID,
                environment: input.environment ?? .sandbox, appleAnswer: signed.payload, appleStatus: nil,
                transactions: ReceiptTransactions(inApp: [transaction], latestReceiptInfo: [], namedTransactionID: nil),
                row: .complete))
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

    /// The answer, in the shape of a receipt's: `apple_status` null, the
    /// environment exactly as Apple signed it (`Xcode` too), one entry in `transactions`.
    func answer(_ input: Input, delivered answers: [TransactionAnswer]) -> VerifyAnswer {
        let status = VerifyStatus.finalStatus(
            states: answers.map(\.state), namedTransactionID: nil, namedTransactionPresent: true)
        let deliveredOrderID = answers.first { $0.state == .delivered }?.orderID
        return VerifyAnswer(
            status: status, environment: input.environment, orderID: deliveredOrderID ?? input.order.orderID,
            app: input.app, transactions: answers, signedEnvironment: input.signedEnvironment)
    }

    func retryLater(_ input: Input) -> VerifyAnswer {
        VerifyAnswer(
            status: .retryLater, environment: input.environment, orderID: input.order.orderID,
            signedEnvironment: input.signedEnvironment)
    }
}
