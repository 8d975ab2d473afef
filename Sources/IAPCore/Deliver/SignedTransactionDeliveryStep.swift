/// What a verified StoreKit 2 transaction's delivery does once its audit row
/// is written (docs/api.md "POST /v1/transactions/verify" steps 3 to 5): the
/// bundle check and the sandbox policy (`SignedTransactionAdmission`), then
/// either an answer as it is or a delivery in the same terms as a receipt's
/// (`DeliveryInput`), so that exactly-once holds across both routes.
public enum SignedTransactionDeliveryStep: Equatable, Sendable {
    /// Not delivered: answered as it is.
    case answer(VerifyAnswer)
    /// Refused by the bundle check or the sandbox policy for `reason`: answered `rejected`.
    case rejected(VerifyAnswer, reason: String)
    /// Admitted: its transaction is delivered.
    case deliver(DeliveryInput)

    /// A verified transaction as its delivery and its answer read it.
    public struct Transaction: Equatable, Sendable {
        public let transaction: AppleTransaction
        public let bundleID: String
        /// The payload's `environment`, as Apple signed it.
        public let signedEnvironmentName: String
        /// The verified payload, for the audit row.
        public let payload: [UInt8]
        public let order: SignedTransactionOrder
        public let appVersion: String?

        public init(
            transaction: AppleTransaction, bundleID: String, signedEnvironmentName: String, payload: [UInt8],
            order: SignedTransactionOrder, appVersion: String?
        ) {
            self.transaction = transaction
            self.bundleID = bundleID
            self.signedEnvironmentName = signedEnvironmentName
            self.payload = payload
            self.order = order
            self.appVersion = appVersion
        }

        /// The environment Apple signed, which the answer shows as it is; nil when unknown.
        public var signedEnvironment: SignedTransactionAdmission.Environment? {
            SignedTransactionAdmission.Environment(rawValue: signedEnvironmentName)
        }

        /// Where the rows place it (`Xcode`, `LocalTesting`: `Sandbox`).
        public var environment: AppleEnvironment? {
            signedEnvironment?.deliveryEnvironment
        }

        /// The answer's `app`: the bundle the transaction was signed for.
        public var app: AppleReceipt {
            AppleReceipt(format: .appReceipt, bundleID: bundleID, applicationVersion: nil, appItemID: nil, inApp: [])
        }

        /// The answer once delivery did what `delivered` says, in the shape of a receipt's:
        /// `apple_status` null, the environment exactly as Apple signed it, one entry in
        /// `transactions`; the order shown is the one delivered to, else the resolved one.
        public func answer(delivered: [TransactionAnswer]) -> VerifyAnswer {
            let status = VerifyStatus.finalStatus(
                states: delivered.map(\.state), namedTransactionID: nil, namedTransactionPresent: true)
            let deliveredOrderID = delivered.first { $0.state == .delivered }?.orderID
            return VerifyAnswer(
                status: status, environment: environment, orderID: deliveredOrderID ?? order.orderID, app: app,
                transactions: delivered, signedEnvironment: signedEnvironment)
        }

        /// The answer when nothing could be written or decided now: the app retries.
        public func retryLater() -> VerifyAnswer {
            VerifyAnswer(
                status: .retryLater, environment: environment, orderID: order.orderID,
                signedEnvironment: signedEnvironment)
        }
    }

    /// The step for `signed`, whose audit row is `receiptID`, under `rules`.
    public init(_ signed: Transaction, receiptID: UInt64, rules: DeliveryDecision.Rules) {
        let admission = SignedTransactionAdmission.admit(
            bundleID: signed.bundleID, environment: signed.signedEnvironmentName, bundleIDs: rules.bundleIDs,
            policy: rules.sandboxPolicy, settingsAreKnown: rules.settingsAreKnown, reviewVersion: rules.reviewVersion,
            sandboxUsers: rules.sandboxUsers, appVersion: signed.appVersion, userID: signed.order.userID)
        switch admission {
        case .settingsUnknown:
            // Rejecting it would tell the app to finish an App Review purchase: the app retries.
            self = .answer(signed.retryLater())
        case .rejected(let reason):
            self = .rejected(
                VerifyAnswer(
                    status: .rejected, environment: signed.environment, orderID: signed.order.orderID, app: signed.app,
                    transactions: [TransactionAnswer(transaction: signed.transaction, state: .rejected, orderID: nil)],
                    signedEnvironment: signed.signedEnvironment),
                reason: reason)
        case .admitted:
            self = .deliver(
                DeliveryInput(
                    receiptID: receiptID, userID: signed.order.userID, orderID: signed.order.orderID,
                    environment: signed.environment ?? .sandbox, appleAnswer: signed.payload, appleStatus: nil,
                    transactions: ReceiptTransactions(
                        inApp: [signed.transaction], latestReceiptInfo: [], namedTransactionID: nil),
                    row: .complete))
        }
    }
}
