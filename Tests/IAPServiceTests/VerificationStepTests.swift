@testable import IAPService
import IAPCore
import XCTest

/// `Verification.step`: `DeliveryDecision` put in the stores' terms, the
/// receipt's row and the request's order carried to what is written.
final class VerificationStepTests: XCTestCase {
    private let orderID = "3f2b8c1e-9d4a-4e6b-8a7c-1d2e3f4a5b6c"

    private func pending(row: ReceiptStore.RowState = .bare) throws -> Verification.Pending {
        let request = VerifyRequest(
            receipt: try ReceiptData.normalise("TWFu"), orderID: orderID, userID: "u-7", appVersion: "1.0.0")
        return Verification.Pending(request: request, userID: "u-7", receiptID: 42, row: row)
    }

    private let verification = Verification(
        bundleIDs: ["com.example.game"], sandboxPolicy: .review, settings: SettingsCache())

    private func valid(_ environment: AppleEnvironment) -> AppleOutcome {
        let transaction = AppleTransaction(transactionID: "1000", productID: "gems", purchaseDateMs: 1_700_000_000_000)
        let receipt = AppleReceipt(
            format: .appReceipt, bundleID: "com.example.game", applicationVersion: "1", appItemID: nil,
            inApp: [transaction])
        return AppleOutcome(
            verdict: .valid(AppleReply(status: 0, receipt: receipt), environment: environment),
            environment: environment, lastAnswer: Array("{}".utf8))
    }

    func testAnAdmittedReceiptIsDeliveredForItsRowAndOrder() throws {
        let step = verification.step(try pending(), outcome: valid(.production))
        guard case .deliver(let input, let admitted) = step else { return XCTFail("\(step)") }
        XCTAssertEqual(input.receiptID, 42)
        XCTAssertEqual(input.userID, "u-7")
        XCTAssertEqual(input.orderID, orderID)
        XCTAssertEqual(input.row, .bare)
        XCTAssertEqual(input.transactions, admitted.transactions)
        XCTAssertEqual(input.appleAnswerRecord?.receiptID, 42)
        XCTAssertEqual(step.batchItem.delivery?.member.receiptID, 42)
        XCTAssertEqual(step.batchItem.delivery?.environment, .production)
    }

    func testARowWrittenCompleteIsNotWrittenAgainOnDelivery() throws {
        let step = verification.step(try pending(row: .checkedHere), outcome: valid(.production))
        guard case .deliver(let input, _) = step else { return XCTFail("\(step)") }
        XCTAssertNil(input.appleAnswerRecord)
        XCTAssertNil(step.batchItem.record)
    }

    func testAnAnswerRecordedNamesTheReceiptsRow() throws {
        let refused = AppleOutcome(
            verdict: .invalid(appleStatus: 21003), environment: .production, lastAnswer: nil,
            checkedHere: CheckedHere(mode: .local, failedCheck: "badSignature"))
        let step = verification.step(try pending(), outcome: refused)
        guard case .record(let record?, let answer) = step else { return XCTFail("\(step)") }
        XCTAssertEqual(record.receiptID, 42)
        XCTAssertEqual(record.failedCheck, "badSignature")
        XCTAssertNil(record.appleStatus)
        XCTAssertTrue(record.completed)
        XCTAssertEqual(answer.status, .notPaid)
        XCTAssertNil(step.batchItem.delivery)
        XCTAssertEqual(step.answer(request: try pending().request, delivered: []), answer)
    }

    /// The settings are not read (no database here): a sandbox receipt under
    /// `review` waits, its row left unverified.
    func testASandboxReceiptWaitsForTheSettings() throws {
        let step = verification.step(try pending(), outcome: valid(.sandbox))
        guard case .record(let record?, let answer) = step else { return XCTFail("\(step)") }
        XCTAssertEqual(answer.status, .retryLater)
        XCTAssertFalse(record.completed)
        XCTAssertEqual(record.receiptID, 42)
    }
}
