/// What a receipt's delivery writes for Apple's outcome: `DeliveryDecision`
/// put in the terms of the receipt's audit row, so that the row and the
/// request's order reach what is written, and a row written complete is not
/// written again.
public enum ReceiptDeliveryStep: Equatable, Sendable {
    /// Apple's answer is stored (unless the row holds it: nil) and `answer`
    /// given; nothing is delivered.
    case record(AppleAnswerRecord?, answer: VerifyAnswer)
    /// An admitted receipt: its transactions are delivered.
    case deliver(DeliveryInput, admitted: DeliveryDecision.Admitted)

    /// The step for `outcome` of `request`, made by `userID`, whose audit row
    /// is `receiptID` and holds `row`.
    public init(
        _ outcome: DeliveryDecision.Outcome, request: VerifyRequest, userID: String, receiptID: UInt64,
        row: ReceiptRowState, rules: DeliveryDecision.Rules
    ) {
        let decision = DeliveryDecision(outcome, request: request, userID: userID, rowIsBare: row == .bare, rules: rules)
        switch decision {
        case .record(let record, let answer):
            self = .record(record.map { AppleAnswerRecord(receiptID: receiptID, $0) }, answer: answer)
        case .deliver(let admitted):
            self = .deliver(
                DeliveryInput(
                    receiptID: receiptID, userID: userID, orderID: request.orderID, environment: admitted.environment,
                    appleAnswer: admitted.appleAnswer, appleStatus: admitted.appleStatus,
                    transactions: admitted.transactions, row: row),
                admitted: admitted)
        }
    }

    /// The answer once the step is written and `delivered` what it delivered.
    public func answer(request: VerifyRequest, delivered: [TransactionAnswer]) -> VerifyAnswer {
        switch self {
        case .record(_, let answer):
            return answer
        case .deliver(_, let admitted):
            return admitted.answer(request: request, delivered: delivered)
        }
    }
}
