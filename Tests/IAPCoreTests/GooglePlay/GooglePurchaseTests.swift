import Crypto
import XCTest

@testable import IAPCore

final class GooglePurchaseTests: XCTestCase {
    /// The shape Google's productsv2 answers (fields as documented; a few the service ignores).
    static let purchased = #"""
        {"kind": "androidpublisher#productPurchaseV2",
         "productLineItem": [{"productId": "gems_100", "productOfferDetails": {"quantity": 3, "refundableQuantity": 3,
           "consumptionState": "CONSUMPTION_STATE_YET_TO_BE_CONSUMED", "purchaseOptionId": "legacy-base"}}],
         "purchaseStateContext": {"purchaseState": "PURCHASED"},
         "orderId": "GPA.1234-5678-9012-34567", "obfuscatedExternalAccountId": "0f8fad5b-d9cb-469f-a165-70867728950e",
         "acknowledgementState": "ACKNOWLEDGEMENT_STATE_PENDING", "purchaseCompletionTime": "2025-11-29T07:06:40.123456Z",
         "regionCode": "US"}
        """#

    private func parse(_ json: String) throws(GoogleReplyError) -> GooglePurchase {
        try GooglePurchase.parse(Array(json.utf8))
    }

    func testAPurchasedPurchaseIsReadWhole() throws {
        XCTAssertEqual(
            try parse(Self.purchased),
            GooglePurchase(
                lineItems: [.init(productID: "gems_100", quantity: 3)], state: .purchased,
                orderID: "GPA.1234-5678-9012-34567", isTestPurchase: false,
                obfuscatedAccountID: "0f8fad5b-d9cb-469f-a165-70867728950e", isAcknowledged: false,
                completionTimeMilliseconds: 1_764_400_000_000, regionCode: "US"))
    }

    func testATestPendingPurchaseWithoutOrderOrQuantity() throws {
        let purchase = try parse(
            #"{"productLineItem": [{"productId": "gems_100", "productOfferDetails": {}}], "#
                + #""purchaseStateContext": {"purchaseState": "PENDING"}, "testPurchaseContext": {"fopType": "TEST"}, "#
                + #""acknowledgementState": "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"}"#)
        XCTAssertEqual(purchase.state, .pending)
        XCTAssertTrue(purchase.isTestPurchase)
        XCTAssertTrue(purchase.isAcknowledged)
        XCTAssertNil(purchase.orderID)
        XCTAssertNil(purchase.completionTimeMilliseconds)
        XCTAssertEqual(purchase.lineItems, [.init(productID: "gems_100", quantity: 1)])
    }

    func testWhatCannotBeDecidedOnIsAnError() {
        let state = #""purchaseStateContext": {"purchaseState": "PURCHASED"}"#
        let item = #""productLineItem": [{"productId": "p"}]"#
        for (json, error) in [
            ("[]", GoogleReplyError.notAnObject),
            ("{\(state)}", GoogleReplyError(.missingField, field: "productLineItem")),
            ("{\(state), \"productLineItem\": []}", GoogleReplyError(.missingField, field: "productLineItem")),
            ("{\(item)}", GoogleReplyError(.missingField, field: "purchaseStateContext.purchaseState")),
            ("{\(item), \"purchaseStateContext\": {\"purchaseState\": \"REFUNDED\"}}",
             GoogleReplyError(.invalidField, field: "purchaseStateContext.purchaseState")),
            ("{\(state), \"productLineItem\": [{\"productOfferDetails\": {\"quantity\": 1}}]}",
             GoogleReplyError(.missingField, field: "productLineItem[0].productId")),
            ("{\(state), \"productLineItem\": [{\"productId\": \"p\", \"productOfferDetails\": {\"quantity\": 0}}]}",
             GoogleReplyError(.invalidField, field: "productLineItem[0].productOfferDetails.quantity")),
            ("{\(state), \(item), \"purchaseCompletionTime\": \"yesterday\"}",
             GoogleReplyError(.invalidField, field: "purchaseCompletionTime")),
            ("{\(state), \(item), \"orderId\": 7}", GoogleReplyError(.invalidField, field: "orderId")),
        ] {
            XCTAssertThrowsError(try parse(json), json) { XCTAssertEqual($0 as? GoogleReplyError, error, json) }
        }
    }

    func testTheTransactionIDIsTheOrderIDElseTheTokensHash() {
        XCTAssertEqual(
            GoogleTransactionID.of(orderID: "GPA.1234-5678-9012-34567", purchaseToken: "t"), "GPA.1234-5678-9012-34567")
        let token = "opaque-token.AO-J1Oz"
        let digest = SHA256.hash(data: Array(token.utf8)).map { String(format: "%02x", $0) }.joined()
        XCTAssertEqual(GoogleTransactionID.tokenSHA256(token), digest)
        XCTAssertEqual(GoogleTransactionID.of(orderID: nil, purchaseToken: token), "GP-" + digest.prefix(32))
        XCTAssertEqual(GoogleTransactionID.of(orderID: "", purchaseToken: token), "GP-" + digest.prefix(32))
        XCTAssertEqual(GoogleTransactionID.of(orderID: nil, purchaseToken: token).count, 35)
    }
}
