import IAPCore
import XCTest

/// `SignedTransactionDeliveryStep`: a verified StoreKit 2 transaction admitted
/// and delivered in a receipt's terms, or answered as it is, with the
/// environment Apple signed shown unchanged.
final class SignedTransactionDeliveryStepTests: XCTestCase {
    private let orderID = "3f2b8c1e-9d4a-4e6b-8a7c-1d2e3f4a5b6c"
    private let payload = Array(#"{"transactionId":"2000"}"#.utf8)

    private func signed(_ environment: String, orderID: String? = nil) -> SignedTransactionDeliveryStep.Transaction {
        SignedTransactionDeliveryStep.Transaction(
            transaction: AppleFixtures.transaction("2000"), bundleID: "com.example.game",
            signedEnvironmentName: environment, payload: payload,
            order: SignedTransactionOrder(orderID: orderID, userID: "u-7"), appVersion: "1.0.0")
    }

    private func rules(policy: SandboxPolicy = .review, settingsAreKnown: Bool = true) -> DeliveryDecision.Rules {
        DeliveryDecision.Rules(
            bundleIDs: ["com.example.game"], sandboxPolicy: policy, settingsAreKnown: settingsAreKnown,
            reviewVersion: "", sandboxUsers: [])
    }

    func testAnAdmittedTransactionIsDeliveredAsAReceiptsWithItsRowComplete() {
        let step = SignedTransactionDeliveryStep(signed("Production", orderID: orderID), receiptID: 42, rules: rules())
        guard case .deliver(let input) = step else { return XCTFail("\(step)") }
        XCTAssertEqual(input.receiptID, 42)
        XCTAssertEqual(input.userID, "u-7")
        XCTAssertEqual(input.orderID, orderID)
        XCTAssertEqual(input.environment, .production)
        XCTAssertEqual(input.appleAnswer, payload)
        XCTAssertNil(input.appleStatus)
        XCTAssertEqual(input.transactions.transactions.map(\.transactionID), ["2000"])
        // The audit row was written complete with the verified payload: delivery writes nothing to it.
        XCTAssertEqual(input.row, .complete)
        XCTAssertNil(input.appleAnswerRecord)
    }

    func testXcodeIsDeliveredAsSandboxUnderAlways() {
        let step = SignedTransactionDeliveryStep(signed("Xcode"), receiptID: 42, rules: rules(policy: .always))
        guard case .deliver(let input) = step else { return XCTFail("\(step)") }
        XCTAssertEqual(input.environment, .sandbox)
    }

    func testXcodeUnderReviewIsRejectedShowingTheEnvironmentAppleSigned() {
        let step = SignedTransactionDeliveryStep(signed("Xcode", orderID: orderID), receiptID: 42, rules: rules())
        guard case .rejected(let answer, let reason) = step else { return XCTFail("\(step)") }
        XCTAssertTrue(reason.contains("Xcode"), reason)
        XCTAssertEqual(answer.status, .rejected)
        XCTAssertEqual(answer.environment, .sandbox)
        XCTAssertEqual(answer.signedEnvironment, .xcode)
        XCTAssertEqual(answer.orderID, orderID)
        XCTAssertEqual(answer.app?.bundleID, "com.example.game")
        XCTAssertEqual(answer.transactions.map(\.state), [.rejected])
        XCTAssertNil(answer.appleStatus)
    }

    func testAnUnknownEnvironmentIsRejectedWithNoEnvironmentShown() {
        let step = SignedTransactionDeliveryStep(signed("Staging"), receiptID: 42, rules: rules(policy: .always))
        guard case .rejected(let answer, _) = step else { return XCTFail("\(step)") }
        XCTAssertNil(answer.environment)
        XCTAssertNil(answer.signedEnvironment)
    }

    /// Rejecting it would tell the app to finish an App Review purchase.
    func testASandboxTransactionWaitsForTheSettings() {
        let step = SignedTransactionDeliveryStep(
            signed("Sandbox", orderID: orderID), receiptID: 42, rules: rules(settingsAreKnown: false))
        XCTAssertEqual(
            step,
            .answer(VerifyAnswer(status: .retryLater, environment: .sandbox, orderID: orderID, signedEnvironment: .sandbox)))
    }

    func testTheAnswerShowsTheOrderDeliveredToElseTheResolvedOne() {
        let transaction = signed("Production", orderID: orderID)
        let other = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
        let delivered = transaction.answer(delivered: [
            TransactionAnswer(transaction: AppleFixtures.transaction("2000"), state: .delivered, orderID: other)
        ])
        XCTAssertEqual(delivered.status, .delivered)
        XCTAssertEqual(delivered.orderID, other)
        XCTAssertEqual(delivered.signedEnvironment, .production)
        XCTAssertNil(delivered.appleStatus)
        let already = transaction.answer(delivered: [
            TransactionAnswer(transaction: AppleFixtures.transaction("2000"), state: .alreadyDelivered, orderID: nil)
        ])
        XCTAssertEqual(already.orderID, orderID)
    }
}
