/// Apple's last answer to one receipt row, as it is stored.
public struct AppleAnswerRecord: Equatable, Sendable {
    public let receiptID: UInt64
    public let environment: AppleEnvironment?
    public let appleStatus: Int?
    public let answer: [UInt8]?
    /// Marks the verification as done (`verified_at`); a receipt left
    /// without it is one whose Apple call never completed, to be verified again.
    public let completed: Bool
    /// The check a receipt failed here, for `signed_data_error`.
    public let failedCheck: String?

    public init(
        receiptID: UInt64, environment: AppleEnvironment?, appleStatus: Int?, answer: [UInt8]?, completed: Bool,
        failedCheck: String? = nil
    ) {
        self.receiptID = receiptID
        self.environment = environment
        self.appleStatus = appleStatus
        self.answer = answer
        self.completed = completed
        self.failedCheck = failedCheck
    }

    /// `record` of `receiptID`'s row.
    public init(receiptID: UInt64, _ record: DeliveryDecision.AnswerRecord) {
        self.init(
            receiptID: receiptID, environment: record.environment, appleStatus: record.appleStatus,
            answer: record.answer, completed: record.completed, failedCheck: record.failedCheck)
    }
}
