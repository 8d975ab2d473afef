import IAPCore
import XCTest

/// `ReceiptDeliveryStep`: `DeliveryDecision` put in the terms of the receipt's
/// audit row, the row and the request's order carried to what is written.
final class ReceiptDeliveryStepTests: XCTestCase {
    private let orderID = "3f2b8c1e-9d4a-4e6b-8a7c-1d2e3f4a5b6c"

    private func request() throws -> VerifyRequest {
        VerifyRequest(receipt: try ReceiptData.normalise("TWFu"), orderID: orderID, userID: "u-7", appVersion: "1.0.0")
    }

    private func rules(settingsAreKnown: Bool = true) -> DeliveryDecision.Rules {
        DeliveryDecision.Rules(
            bundleIDs: ["com.example.game"], sandboxPolicy: .review, settingsAreKnown: settingsAreKnown,
            reviewVersion: "", sandboxUsers: [])
    }

    private func valid(_ environment: AppleEnvironment) -> DeliveryDecision.Outcome {
        let receipt = AppleReceipt(
            format: .appReceipt, bundleID: "com.example.game", applicationVersion: "1", appItemID: nil,
            inApp: [AppleFixtures.transaction("1000")])
        return DeliveryDecision.Outcome(
            verdict: .valid(AppleReply(status: 0, receipt: receipt), environment: environment),
            environment: environment, lastAnswer: Array("{}".utf8))
    }

    private func step(
        _ outcome: DeliveryDecision.Outcome, row: ReceiptRowState = .bare, settingsAreKnown: Bool = true
    ) throws -> ReceiptDeliveryStep {
        ReceiptDeliveryStep(
            outcome, request: try request(), userID: "u-7", receiptID: 42, row: row,
            rules: rules(settingsAreKnown: settingsAreKnown))
    }

    func testAnAdmittedReceiptIsDeliveredForItsRowAndOrder() throws {
        let step = try step(valid(.production))
        guard case .deliver(let input, let admitted) = step else { return XCTFail("\(step)") }
        XCTAssertEqual(input.receiptID, 42)
        XCTAssertEqual(input.userID, "u-7")
        XCTAssertEqual(input.orderID, orderID)
        XCTAssertEqual(input.environment, .production)
        XCTAssertEqual(input.appleStatus, 0)
        XCTAssertEqual(input.row, .bare)
        XCTAssertEqual(input.transactions, admitted.transactions)
        XCTAssertEqual(
            input.appleAnswerRecord,
            AppleAnswerRecord(
                receiptID: 42, environment: .production, appleStatus: 0, answer: Array("{}".utf8), completed: true))
    }

    func testARowWrittenCompleteIsNotWrittenAgainOnDelivery() throws {
        let step = try step(valid(.production), row: .checkedHere)
        guard case .deliver(let input, _) = step else { return XCTFail("\(step)") }
        XCTAssertEqual(input.row, .checkedHere)
        XCTAssertNil(input.appleAnswerRecord)
    }

    func testARefusedReceiptsAnswerIsRecordedOnItsRow() throws {
        let refused = DeliveryDecision.Outcome(
            verdict: .invalid(appleStatus: 21003), environment: .production, lastAnswer: nil, checkedHere: true,
            failedCheck: "badSignature")
        let step = try step(refused)
        guard case .record(let record?, let answer) = step else { return XCTFail("\(step)") }
        XCTAssertEqual(record.receiptID, 42)
        XCTAssertEqual(record.failedCheck, "badSignature")
        XCTAssertNil(record.appleStatus)
        XCTAssertTrue(record.completed)
        XCTAssertEqual(answer.status, .notPaid)
        XCTAssertEqual(answer.orderID, orderID)
        XCTAssertEqual(step.answer(request: try request(), delivered: []), answer)
    }

    /// Settings not read yet: a sandbox receipt under `review` waits, its row
    /// left unverified for a retry.
    func testASandboxReceiptWaitsForTheSettings() throws {
        let step = try step(valid(.sandbox), settingsAreKnown: false)
        guard case .record(let record?, let answer) = step else { return XCTFail("\(step)") }
        XCTAssertEqual(answer.status, .retryLater)
        XCTAssertFalse(record.completed)
        XCTAssertEqual(record.receiptID, 42)
    }

    /// The answer of a delivered step is the admitted receipt's for what was
    /// delivered, the request's order shown.
    func testADeliveredStepAnswersWithWhatWasDelivered() throws {
        let step = try step(valid(.production))
        guard case .deliver(let input, _) = step else { return XCTFail("\(step)") }
        let delivered = input.transactions.transactions.map {
            TransactionAnswer(transaction: $0, state: .delivered, orderID: orderID)
        }
        let answer = step.answer(request: try request(), delivered: delivered)
        XCTAssertEqual(answer.status, .delivered)
        XCTAssertEqual(answer.orderID, orderID)
        XCTAssertEqual(answer.transactions.count, 1)
    }
}
