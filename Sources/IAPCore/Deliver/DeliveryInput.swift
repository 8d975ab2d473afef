/// What a verification brings to delivery: an admitted receipt, a signed
/// transaction or a Google purchase, with the audit row it came from.
public struct DeliveryInput: Equatable, Sendable {
    public let receiptID: UInt64
    public let userID: String
    public let orderID: String?
    public let environment: AppleEnvironment
    /// Apple's answer for the audit row: verifyReceipt's JSON, or a signed
    /// transaction's verified payload.
    public let appleAnswer: [UInt8]?
    /// verifyReceipt's status; nil for a signed transaction (Apple was not called).
    public let appleStatus: Int?
    public let transactions: ReceiptTransactions
    /// What the receipt's audit row holds already.
    public let row: ReceiptRowState

    public init(
        receiptID: UInt64, userID: String, orderID: String?, environment: AppleEnvironment, appleAnswer: [UInt8]?,
        appleStatus: Int?, transactions: ReceiptTransactions, row: ReceiptRowState = .bare
    ) {
        self.receiptID = receiptID
        self.userID = userID
        self.orderID = orderID
        self.environment = environment
        self.appleAnswer = appleAnswer
        self.appleStatus = appleStatus
        self.transactions = transactions
        self.row = row
    }

    /// What delivery writes to the receipt's row (the verification is
    /// complete); nil when the row holds it already.
    public var appleAnswerRecord: AppleAnswerRecord? {
        guard row == .bare else { return nil }
        return AppleAnswerRecord(
            receiptID: receiptID, environment: environment, appleStatus: appleStatus, answer: appleAnswer,
            completed: true)
    }
}
