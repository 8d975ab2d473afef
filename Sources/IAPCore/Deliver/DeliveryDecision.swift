/// The central choice of a receipt's verification once Apple has spoken:
/// record Apple's answer and answer the request, or deliver the receipt's
/// transactions. Decided before any database work, from values only, so that
/// every branch (outage, invalid receipt, receipt without transactions,
/// bundle or sandbox refusal, settings not read yet, admitted) is unit tested
/// here; the delivery threads only write what it says.
public enum DeliveryDecision: Equatable, Sendable {
    /// Apple's answer is written to the receipt's row (unless the row holds it
    /// already: nil) and `answer` given; nothing is delivered.
    case record(AnswerRecord?, answer: VerifyAnswer)
    /// A valid receipt this service honours: its transactions are delivered.
    case deliver(Admitted)

    /// How a receipt's conversation with Apple ended, as the decision needs it.
    public struct Outcome: Equatable, Sendable {
        public let verdict: AppleVerdict
        /// The environment asked last.
        public let environment: AppleEnvironment
        /// Apple's last answer as received, for the audit row.
        public let lastAnswer: [UInt8]?
        /// The receipt was checked by this process, not by verifyReceipt:
        /// Apple's status is not shown (the verdict's status only says what
        /// Apple's would have been).
        public let checkedHere: Bool
        /// The check a receipt failed here, for the audit row's `signed_data_error`.
        public let failedCheck: String?

        public init(
            verdict: AppleVerdict, environment: AppleEnvironment, lastAnswer: [UInt8]?, checkedHere: Bool = false,
            failedCheck: String? = nil
        ) {
            self.verdict = verdict
            self.environment = environment
            self.lastAnswer = lastAnswer
            self.checkedHere = checkedHere
            self.failedCheck = failedCheck
        }

        /// Apple's status as the answer and the audit row show it.
        public func shownStatus(_ appleStatus: Int?) -> Int? {
            checkedHere ? nil : appleStatus
        }
    }

    /// What the bundle check and the sandbox policy go by (`Admission`).
    public struct Rules: Sendable {
        public let bundleIDs: [String]
        public let sandboxPolicy: SandboxPolicy
        /// False while the `settings` table has not been read: the review
        /// version and the sandbox users are unknown, not empty.
        public let settingsAreKnown: Bool
        public let reviewVersion: String
        public let sandboxUsers: [String]

        public init(
            bundleIDs: [String], sandboxPolicy: SandboxPolicy, settingsAreKnown: Bool, reviewVersion: String,
            sandboxUsers: [String]
        ) {
            self.bundleIDs = bundleIDs
            self.sandboxPolicy = sandboxPolicy
            self.settingsAreKnown = settingsAreKnown
            self.reviewVersion = reviewVersion
            self.sandboxUsers = sandboxUsers
        }
    }

    /// Apple's last answer as the receipt's row stores it.
    public struct AnswerRecord: Equatable, Sendable {
        public let environment: AppleEnvironment?
        public let appleStatus: Int?
        public let answer: [UInt8]?
        /// Marks the verification as done (`verified_at`). A row left without
        /// it is verified again by a later retry, as after an Apple outage.
        public let completed: Bool
        public let failedCheck: String?
    }

    /// An admitted receipt, with what delivery writes and answers.
    public struct Admitted: Equatable, Sendable {
        public let environment: AppleEnvironment
        /// Apple's answer for the audit row.
        public let appleAnswer: [UInt8]?
        /// The status shown (none for a receipt checked here).
        public let appleStatus: Int?
        public let transactions: ReceiptTransactions
        public let receipt: AppleReceipt

        /// The request's answer once each transaction became what `delivered`
        /// says: the order shown is the request's when a transaction went to
        /// it, else the first one delivered, else the request's.
        public func answer(request: VerifyRequest, delivered: [TransactionAnswer]) -> VerifyAnswer {
            let status = VerifyStatus.finalStatus(
                states: delivered.map(\.state), namedTransactionID: request.transactionID,
                namedTransactionPresent: transactions.namedTransactionPresent)
            let boundOrderID = delivered.first { $0.state == .delivered && $0.orderID == request.orderID }?.orderID
            let firstDelivered = delivered.first { $0.state == .delivered }?.orderID
            return VerifyAnswer(
                status: status, environment: environment, appleStatus: appleStatus,
                orderID: boundOrderID ?? firstDelivered ?? request.orderID, app: receipt, transactions: delivered)
        }
    }

    /// The decision for `outcome` of `request`, made by `userID`, whose row
    /// holds no answer yet when `rowIsBare` (a receipt checked here is written
    /// complete, and its answer is not written again).
    public init(_ outcome: Outcome, request: VerifyRequest, userID: String, rowIsBare: Bool, rules: Rules) {
        func completion(appleStatus: Int) -> AnswerRecord? {
            guard rowIsBare else { return nil }
            return AnswerRecord(
                environment: outcome.environment, appleStatus: outcome.shownStatus(appleStatus),
                answer: outcome.lastAnswer, completed: true, failedCheck: outcome.failedCheck)
        }
        switch outcome.verdict {
        case .unavailable:
            // Left without verified_at: a later retry verifies it again.
            let answer = Self.retryLater(orderID: request.orderID, outcome: outcome)
            self = .record(
                AnswerRecord(
                    environment: answer.environment, appleStatus: answer.appleStatus, answer: outcome.lastAnswer,
                    completed: false, failedCheck: nil),
                answer: answer)
        case .invalid(let appleStatus):
            self = .record(
                completion(appleStatus: appleStatus),
                answer: VerifyAnswer(
                    status: .notPaid, environment: outcome.environment, appleStatus: outcome.shownStatus(appleStatus),
                    orderID: request.orderID))
        case .valid(let reply, let environment):
            guard let receipt = reply.receipt else {
                self = .record(
                    completion(appleStatus: reply.status),
                    answer: VerifyAnswer(
                        status: .notPaid, environment: environment, appleStatus: outcome.shownStatus(reply.status),
                        orderID: request.orderID))
                return
            }
            let transactions = ReceiptTransactions(reply: reply, namedTransactionID: request.transactionID)
            let admission = Admission.admit(
                receipt: receipt, environment: environment, bundleIDs: rules.bundleIDs, policy: rules.sandboxPolicy,
                settingsAreKnown: rules.settingsAreKnown, reviewVersion: rules.reviewVersion,
                sandboxUsers: rules.sandboxUsers, appVersion: request.appVersion, userID: userID)
            switch admission {
            case .settingsUnknown:
                // Left without verified_at, like an Apple outage: the app's retry
                // or retry-pending decides once the settings are read.
                self = .record(
                    AnswerRecord(
                        environment: environment, appleStatus: outcome.shownStatus(reply.status),
                        answer: outcome.lastAnswer, completed: false, failedCheck: nil),
                    answer: Self.retryLater(orderID: request.orderID, outcome: outcome))
            case .rejected:
                self = .record(
                    completion(appleStatus: reply.status),
                    answer: VerifyAnswer(
                        status: .rejected, environment: environment, appleStatus: outcome.shownStatus(reply.status),
                        orderID: request.orderID, app: receipt,
                        transactions: transactions.transactions.map {
                            TransactionAnswer(transaction: $0, state: .rejected, orderID: nil)
                        }))
            case .admitted:
                self = .deliver(
                    Admitted(
                        environment: environment, appleAnswer: outcome.lastAnswer,
                        appleStatus: outcome.shownStatus(reply.status), transactions: transactions, receipt: receipt))
            }
        }
    }

    /// The answer of a verification whose outcome is not recorded now (Apple
    /// unavailable, the deadline passed, the database refused): the receipt
    /// stays unverified, and a later retry verifies it again. It shows what
    /// Apple said, if anything.
    public static func retryLater(orderID: String?, outcome: Outcome) -> VerifyAnswer {
        switch outcome.verdict {
        case .unavailable(let appleStatus):
            return VerifyAnswer(
                status: .retryLater, environment: appleStatus == nil ? nil : outcome.environment,
                appleStatus: outcome.shownStatus(appleStatus), orderID: orderID)
        case .invalid(let appleStatus):
            return VerifyAnswer(
                status: .retryLater, environment: outcome.environment, appleStatus: outcome.shownStatus(appleStatus),
                orderID: orderID)
        case .valid(let reply, let environment):
            return VerifyAnswer(
                status: .retryLater, environment: environment, appleStatus: outcome.shownStatus(reply.status),
                orderID: orderID)
        }
    }
}
