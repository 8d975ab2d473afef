import IAPCore
import XCTest

@testable import IAPService

final class GoogleVoidedSyncLineTests: XCTestCase {
    let partial = GoogleVoidedPurchase(
        purchaseToken: "tok", orderID: "GPA.1", voidedTimeMilliseconds: 1_764_400_000_000, voidedQuantity: 2)

    func testTheOperatorReadsWhatChangedAndNeverTheToken() {
        XCTAssertEqual(
            GoogleVoidedSync.line(partial, .applied(transactionID: "GPA.1", quantity: 5, .part(quantity: 2, takesBack: true))),
            "GPA.1: 2 of 5 refunded 2025-11-29T07:06:40Z")
        XCTAssertEqual(
            GoogleVoidedSync.line(
                partial, .applied(transactionID: "GPA.1", quantity: 5, .whole(takesBack: false, refundedQuantity: 3))),
            "GPA.1: the last 3 of 5 refunded 2025-11-29T07:06:40Z (never delivered)")
        let tokenOnly = GoogleVoidedPurchase(
            purchaseToken: "tok", orderID: nil, voidedTimeMilliseconds: 1_764_400_000_000, voidedQuantity: nil)
        let notHere = GoogleVoidedSync.line(tokenOnly, .notHere) ?? ""
        XCTAssertTrue(notHere.hasPrefix("token " + GoogleTransactionID.tokenSHA256("tok").prefix(16)), notHere)
        XCTAssertFalse(notHere.contains(" tok "), notHere)
    }

    func testWhatChangedNothingIsOnlyCounted() {
        XCTAssertNil(GoogleVoidedSync.line(partial, .alreadyApplied(transactionID: "GPA.1")))
        XCTAssertNil(GoogleVoidedSync.line(partial, .applied(transactionID: "GPA.1", quantity: 5, .unchanged)))
    }
}
