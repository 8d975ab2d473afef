import IAPCore
import XCTest

final class DeliveryDecisionTests: XCTestCase {
    private let orderID = "3f2b8c1e-9d4a-4e6b-8a7c-1d2e3f4a5b6c"
    private let lastAnswer = Array(#"{"status":0}"#.utf8)

    private func request(transactionID: String? = nil, appVersion: String? = "1.2.0") throws -> VerifyRequest {
        VerifyRequest(
            receipt: try ReceiptData.normalise("TWFu"), orderID: orderID, transactionID: transactionID,
            userID: "u-1001", appVersion: appVersion)
    }

    private func rules(
        policy: SandboxPolicy = .review, settingsAreKnown: Bool = true, reviewVersion: String = "",
        sandboxUsers: [String] = []
    ) -> DeliveryDecision.Rules {
        DeliveryDecision.Rules(
            bundleIDs: ["com.example.game"], sandboxPolicy: policy, settingsAreKnown: settingsAreKnown,
            reviewVersion: reviewVersion, sandboxUsers: sandboxUsers)
    }

    private func valid(
        _ environment: AppleEnvironment = .production, bundleID: String = "com.example.game",
        transactions: [AppleTransaction] = [AppleFixtures.transaction("1"), AppleFixtures.transaction("2")]
    ) -> AppleVerdict {
        let receipt = AppleReceipt(
            format: .appReceipt, bundleID: bundleID, applicationVersion: "1.0", appItemID: nil, inApp: transactions)
        return .valid(AppleReply(status: 0, receipt: receipt), environment: environment)
    }

    private func decide(
        _ verdict: AppleVerdict, environment: AppleEnvironment = .production, checkedHere: Bool = false,
        failedCheck: String? = nil, rowIsBare: Bool = true, rules: DeliveryDecision.Rules? = nil,
        request: VerifyRequest? = nil
    ) throws -> DeliveryDecision {
        let outcome = DeliveryDecision.Outcome(
            verdict: verdict, environment: environment, lastAnswer: lastAnswer, checkedHere: checkedHere,
            failedCheck: failedCheck)
        return DeliveryDecision(
            outcome, request: try request ?? self.request(), userID: "u-1001", rowIsBare: rowIsBare,
            rules: rules ?? self.rules())
    }

    private func record(_ decision: DeliveryDecision) -> (DeliveryDecision.AnswerRecord?, VerifyAnswer)? {
        guard case .record(let record, let answer) = decision else { return nil }
        return (record, answer)
    }

    func testAnAppleOutageIsRecordedIncompleteAndAnsweredRetryLater() throws {
        let (record, answer) = try XCTUnwrap(record(decide(.unavailable(appleStatus: 21005))))
        XCTAssertEqual(answer.status, .retryLater)
        XCTAssertEqual(answer.appleStatus, 21005)
        XCTAssertEqual(answer.environment, .production)
        XCTAssertEqual(answer.orderID, orderID)
        XCTAssertEqual(record?.completed, false, "left without verified_at: a retry verifies it again")
        XCTAssertEqual(record?.appleStatus, 21005)
        XCTAssertEqual(record?.answer, lastAnswer)
    }

    func testAnOutageWithoutAnyAnswerShowsNoEnvironment() throws {
        let (record, answer) = try XCTUnwrap(record(decide(.unavailable(appleStatus: nil))))
        XCTAssertNil(answer.environment)
        XCTAssertNil(answer.appleStatus)
        XCTAssertNil(record?.environment)
        // Even a row written complete is recorded as unverified again.
        XCTAssertEqual(try XCTUnwrap(self.record(decide(.unavailable(appleStatus: nil), rowIsBare: false))).0?.completed, false)
    }

    func testAnInvalidReceiptIsNotPaidAndCompletesTheRow() throws {
        let (record, answer) = try XCTUnwrap(record(decide(.invalid(appleStatus: 21003))))
        XCTAssertEqual(answer, VerifyAnswer(status: .notPaid, environment: .production, appleStatus: 21003, orderID: orderID))
        XCTAssertEqual(record?.completed, true)
        XCTAssertEqual(record?.appleStatus, 21003)
    }

    func testAReceiptRefusedHereHidesTheStatusAndNamesTheCheck() throws {
        let (record, answer) = try XCTUnwrap(
            record(decide(.invalid(appleStatus: 21003), checkedHere: true, failedCheck: "badSignature")))
        XCTAssertEqual(answer.status, .notPaid)
        XCTAssertNil(answer.appleStatus)
        XCTAssertNil(record?.appleStatus)
        XCTAssertEqual(record?.failedCheck, "badSignature")
    }

    func testARowThatHoldsItsAnswerIsNotWrittenAgain() throws {
        let (record, answer) = try XCTUnwrap(record(decide(.invalid(appleStatus: 21003), rowIsBare: false)))
        XCTAssertNil(record)
        XCTAssertEqual(answer.status, .notPaid)
    }

    func testAValidAnswerWithoutAReceiptIsNotPaid() throws {
        let verdict = AppleVerdict.valid(AppleReply(status: 0), environment: .sandbox)
        let (record, answer) = try XCTUnwrap(record(decide(verdict, environment: .sandbox)))
        XCTAssertEqual(answer.status, .notPaid)
        XCTAssertEqual(answer.environment, .sandbox)
        XCTAssertEqual(record?.completed, true)
    }

    func testAnotherAppsReceiptIsRejectedWithEachTransaction() throws {
        let (record, answer) = try XCTUnwrap(record(decide(valid(bundleID: "com.other.app"))))
        XCTAssertEqual(answer.status, .rejected)
        XCTAssertEqual(answer.transactions.map(\.transaction.transactionID), ["1", "2"])
        XCTAssertEqual(Set(answer.transactions.map(\.state)), [.rejected])
        XCTAssertEqual(answer.app?.bundleID, "com.other.app")
        XCTAssertEqual(record?.completed, true)
    }

    func testASandboxReceiptBeforeTheSettingsAreReadWaits() throws {
        let (record, answer) = try XCTUnwrap(
            record(decide(valid(.sandbox), environment: .sandbox, rules: rules(settingsAreKnown: false))))
        XCTAssertEqual(answer.status, .retryLater)
        XCTAssertEqual(answer.environment, .sandbox)
        XCTAssertEqual(answer.appleStatus, 0)
        XCTAssertEqual(record?.completed, false)
    }

    func testTheRequestsAppVersionAdmitsASandboxReceiptInReview() throws {
        let inReview = rules(reviewVersion: "1.2.0")
        guard case .deliver = try decide(valid(.sandbox), environment: .sandbox, rules: inReview) else {
            return XCTFail("the review version's sandbox receipt is delivered")
        }
        let other = try decide(
            valid(.sandbox), environment: .sandbox, rules: inReview, request: request(appVersion: "1.1.0"))
        XCTAssertEqual(record(other)?.1.status, .rejected)
    }

    func testAnAdmittedReceiptIsDeliveredNamedTransactionFirst() throws {
        let decision = try decide(valid(), request: request(transactionID: "2"))
        guard case .deliver(let admitted) = decision else { return XCTFail("\(decision)") }
        XCTAssertEqual(admitted.environment, .production)
        XCTAssertEqual(admitted.appleStatus, 0)
        XCTAssertEqual(admitted.appleAnswer, lastAnswer)
        XCTAssertEqual(admitted.transactions.transactions.map(\.transactionID), ["2", "1"])
        XCTAssertEqual(admitted.receipt.bundleID, "com.example.game")
    }

    func testTheDeliveredAnswerShowsTheRequestsOrderWhenATransactionWentToIt() throws {
        let request = try request(transactionID: "1")
        guard case .deliver(let admitted) = try decide(valid(), request: request) else { return XCTFail() }
        let toOther = TransactionAnswer(transaction: AppleFixtures.transaction("2"), state: .delivered, orderID: "other")
        let toRequest = TransactionAnswer(transaction: AppleFixtures.transaction("1"), state: .delivered, orderID: orderID)
        XCTAssertEqual(admitted.answer(request: request, delivered: [toOther, toRequest]).orderID, orderID)
        XCTAssertEqual(admitted.answer(request: request, delivered: [toOther]).orderID, "other")
        let answer = admitted.answer(request: request, delivered: [toRequest, toOther])
        XCTAssertEqual(answer.status, .delivered)
        XCTAssertEqual(answer.app?.bundleID, "com.example.game")
        XCTAssertEqual(answer.transactions, [toRequest, toOther])
    }

    func testRetryLaterShowsWhatAppleSaid() {
        let invalid = DeliveryDecision.Outcome(verdict: .invalid(appleStatus: 21010), environment: .sandbox, lastAnswer: nil)
        XCTAssertEqual(
            DeliveryDecision.retryLater(orderID: nil, outcome: invalid),
            VerifyAnswer(status: .retryLater, environment: .sandbox, appleStatus: 21010))
        let checkedHere = DeliveryDecision.Outcome(
            verdict: valid(), environment: .production, lastAnswer: nil, checkedHere: true)
        XCTAssertNil(DeliveryDecision.retryLater(orderID: orderID, outcome: checkedHere).appleStatus)
    }
}
