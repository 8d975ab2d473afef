import IAPCore
import MariaDB
internal import SignedData

/// API.md "POST /v1/transactions/verify" steps 3 to 5 for a verified
/// transaction whose audit row is recorded: the bundle and the sandbox policy
/// (`SignedTransactionAdmission`), then delivery through the same code as a
/// receipt's transactions (`Delivery`), so that exactly-once holds across
/// both routes by the primary key of `transactions`.
struct SignedTransactionDelivery: Sendable {
    let bundleIDs: [String]
    let sandboxPolicy: SandboxPolicy
    let settings: SettingsCache

    /// A verified transaction and what the request resolved.
    struct Input {
        let transaction: SignedTransaction
        /// The verified payload's object and bytes, as Apple signed them.
        let raw: JSONObject
        let order: SignedTransactionOrder
        let appVersion: String?
        let receiptID: UInt64
    }

    /// The answer, in the shape of a receipt's: `apple_status` null, the
    /// environment Apple signed, one entry in `transactions`.
    func answer(_ input: Input, connection: MariaDBConnection) -> VerifyAnswer {
        let signed = input.transaction
        let transaction = signed.appleTransaction(raw: input.raw)
        let environment = SignedTransactionAdmission.Environment(rawValue: signed.environment)?.deliveryEnvironment
        let app = AppleReceipt(format: .appReceipt, bundleID: signed.bundleID, applicationVersion: nil, appItemID: nil, inApp: [])
        let snapshot = settings.current
        let admission = SignedTransactionAdmission.admit(
            bundleID: signed.bundleID, environment: signed.environment, bundleIDs: bundleIDs, policy: sandboxPolicy,
            settingsAreKnown: snapshot.isLoaded, reviewVersion: snapshot.reviewVersion,
            sandboxUsers: snapshot.sandboxUsers, appVersion: input.appVersion, userID: input.order.userID)
        switch admission {
        case .settingsUnknown:
            // Rejecting it would tell the app to finish an App Review purchase: the app retries.
            return VerifyAnswer(status: .retryLater, environment: environment, orderID: input.order.orderID)
        case .rejected(let reason):
            Log.event("transactions/verify: rejected: \(reason)")
            return VerifyAnswer(
                status: .rejected, environment: environment, orderID: input.order.orderID, app: app,
                transactions: [TransactionAnswer(transaction: transaction, state: .rejected, orderID: nil)])
        case .admitted:
            break
        }
        let delivery = Delivery.Input(
            receiptID: input.receiptID, userID: input.order.userID, orderID: input.order.orderID,
            environment: environment ?? .sandbox, appleAnswer: signed.payload, appleStatus: nil,
            transactions: ReceiptTransactions(inApp: [transaction], latestReceiptInfo: [], namedTransactionID: nil))
        let answers: [TransactionAnswer]
        do {
            answers = try connection.transactionRetryingDeadlocks(attempts: Verification.attempts) {
                let answers = try Delivery(connection: connection).deliverInTransaction(delivery)
                if signed.revocationDate != nil {
                    try SignedTransactionAudit(connection: connection).recordRevocation(of: signed)
                }
                return answers
            }
        } catch {
            Log.event("transactions/verify: not delivered: \(error)")
            return VerifyAnswer(status: .retryLater, environment: environment, orderID: input.order.orderID)
        }
        let status = VerifyStatus.finalStatus(
            states: answers.map(\.state), namedTransactionID: nil, namedTransactionPresent: true)
        let deliveredOrderID = answers.first { $0.state == .delivered }?.orderID
        return VerifyAnswer(
            status: status, environment: environment, orderID: deliveredOrderID ?? input.order.orderID, app: app,
            transactions: answers)
    }
}
