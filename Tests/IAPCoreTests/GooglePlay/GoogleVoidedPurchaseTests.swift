import XCTest

@testable import IAPCore

final class GoogleVoidedPurchaseTests: XCTestCase {
    func testAPageOfWholeAndPartialRefunds() throws {
        let body = """
            {"voidedPurchases": [
              {"kind": "androidpublisher#voidedPurchase", "purchaseToken": "tok-a", "orderId": "GPA.1",
               "purchaseTimeMillis": "1764400000000", "voidedTimeMillis": "1764500000000", "voidedSource": 0,
               "voidedReason": 7},
              {"purchaseToken": "tok-b", "voidedTimeMillis": 1764500000001, "voidedQuantity": 2}],
             "tokenPagination": {"nextPageToken": "next-1"}}
            """
        let page = try GoogleVoidedPurchasePage.parse(Array(body.utf8))
        XCTAssertEqual(page.nextPageToken, "next-1")
        XCTAssertEqual(page.purchases, [
            GoogleVoidedPurchase(
                purchaseToken: "tok-a", orderID: "GPA.1", voidedTimeMilliseconds: 1_764_500_000_000, voidedQuantity: nil,
                voidedSource: 0, voidedReason: 7),
            GoogleVoidedPurchase(
                purchaseToken: "tok-b", orderID: nil, voidedTimeMilliseconds: 1_764_500_000_001, voidedQuantity: 2),
        ])
    }

    func testAnEmptyLastPage() throws {
        XCTAssertEqual(try GoogleVoidedPurchasePage.parse(Array("{}".utf8)), GoogleVoidedPurchasePage(purchases: [], nextPageToken: nil))
    }

    func testWhatCannotBeAppliedIsAnError() {
        for (body, field) in [
            (#"{"voidedPurchases": [{"voidedTimeMillis": "1"}]}"#, "voidedPurchases[0].purchaseToken"),
            (#"{"voidedPurchases": [{"purchaseToken": "t"}]}"#, "voidedPurchases[0].voidedTimeMillis"),
            (#"{"voidedPurchases": [{"purchaseToken": "t", "voidedTimeMillis": "1", "voidedQuantity": 0}]}"#,
             "voidedPurchases[0].voidedQuantity"),
            (#"{"voidedPurchases": {"purchaseToken": "t"}}"#, "voidedPurchases"),
        ] {
            XCTAssertThrowsError(try GoogleVoidedPurchasePage.parse(Array(body.utf8))) { error in
                XCTAssertEqual((error as? GoogleReplyError)?.field, field, body)
            }
        }
    }

    func testTheLedgerKeyIsThePurchaseAndTheMomentItWasVoided() {
        let first = GoogleVoidedPurchase(purchaseToken: "tok", orderID: "GPA.1", voidedTimeMilliseconds: 5, voidedQuantity: 2)
        let again = GoogleVoidedPurchase(purchaseToken: "tok", orderID: nil, voidedTimeMilliseconds: 5, voidedQuantity: 2)
        let later = GoogleVoidedPurchase(purchaseToken: "tok", orderID: "GPA.1", voidedTimeMilliseconds: 6, voidedQuantity: 1)
        XCTAssertEqual(first.ledgerKey, again.ledgerKey)
        XCTAssertNotEqual(first.ledgerKey, later.ledgerKey)
        XCTAssertEqual(first.ledgerKey, "voided:" + GoogleTransactionID.tokenSHA256("tok") + ":5")
        let longest = GoogleVoidedPurchase(
            purchaseToken: "t", orderID: nil, voidedTimeMilliseconds: .max, voidedQuantity: nil)
        XCTAssertLessThanOrEqual(longest.ledgerKey.utf8.count, GooglePushMessage.maxMessageIDLength)
    }
}
