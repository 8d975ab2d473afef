import IAPCore
import XCTest

final class ReceiptCheckRouteTests: XCTestCase {
    func testAnAppReceiptIsCheckedHereUnderLocalAndServerAPI() {
        XCTAssertEqual(ReceiptCheckRoute(mode: .local, format: .appReceipt), .checkHere(thenConfirm: false))
        XCTAssertEqual(ReceiptCheckRoute(mode: .serverAPI, format: .appReceipt), .checkHere(thenConfirm: true))
    }

    func testVerifyReceiptDecidesUnderAppleAndForWhatIsNotAnAppReceipt() {
        for mode in ReceiptVerifierMode.allCases {
            XCTAssertEqual(ReceiptCheckRoute(mode: mode, format: .transactionReceipt), .verifyReceipt, mode.rawValue)
            XCTAssertEqual(ReceiptCheckRoute(mode: mode, format: nil), .verifyReceipt, mode.rawValue)
        }
        XCTAssertEqual(ReceiptCheckRoute(mode: .apple, format: .appReceipt), .verifyReceipt)
    }

    func testOnlyALocalCheckIsSettledWithoutTheNetwork() {
        XCTAssertTrue(ReceiptCheckRoute.checkHere(thenConfirm: false).settledWithoutNetwork)
        XCTAssertFalse(ReceiptCheckRoute.checkHere(thenConfirm: true).settledWithoutNetwork)
        XCTAssertFalse(ReceiptCheckRoute.verifyReceipt.settledWithoutNetwork)
    }

    func testAReceiptThatPassedHereIsValidAndKeepsVerifyReceiptsAnswer() throws {
        let text = #"{"status":0,"environment":"Sandbox","receipt":{"bundle_id":"com.example.game","in_app":[]}}"#
        let reply = try AppleReply.parse(JSONParser.parse(Array(text.utf8)))
        let outcome = DeliveryDecision.Outcome.passedHere(reply, environment: .sandbox)
        XCTAssertEqual(outcome.verdict, .valid(reply, environment: .sandbox))
        XCTAssertEqual(outcome.environment, .sandbox)
        XCTAssertTrue(outcome.checkedHere)
        XCTAssertNil(outcome.failedCheck)
        let kept = try XCTUnwrap(outcome.lastAnswer)
        XCTAssertEqual(try JSONParser.parse(kept), try JSONParser.parse(Array(text.utf8)))
        XCTAssertNil(outcome.shownStatus(0), "a check here shows no Apple status")
    }

    func testAReceiptRefusedHereIsInvalidInProductionAndNamesTheCheck() {
        let outcome = DeliveryDecision.Outcome.refusedHere(check: "untrustedChain")
        XCTAssertEqual(outcome.verdict, .invalid(appleStatus: 21003))
        XCTAssertEqual(outcome.environment, .production)
        XCTAssertNil(outcome.lastAnswer)
        XCTAssertTrue(outcome.checkedHere)
        XCTAssertEqual(outcome.failedCheck, "untrustedChain")
    }
}
