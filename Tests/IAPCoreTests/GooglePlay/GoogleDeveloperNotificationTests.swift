import XCTest

@testable import IAPCore

final class GoogleDeveloperNotificationTests: XCTestCase {
    private func notification(_ body: String) throws -> GoogleDeveloperNotification {
        try GoogleDeveloperNotification.parse(
            Array(#"{"version": "1.0", "packageName": "com.example.game", "eventTimeMillis": "1764400000123", \#(body)}"#.utf8))
    }

    func testTheKinds() throws {
        let purchased = try notification(
            #""oneTimeProductNotification": {"version": "1.0", "notificationType": 1, "purchaseToken": "t1", "sku": "gems_100"}"#)
        XCTAssertEqual(purchased.packageName, "com.example.game")
        XCTAssertEqual(purchased.eventTimeMilliseconds, 1_764_400_000_123)
        XCTAssertEqual(purchased.kind, .oneTimeProductPurchased(purchaseToken: "t1", productID: "gems_100"))
        XCTAssertEqual(purchased.storedKind, "oneTimeProductPurchased")
        XCTAssertEqual(
            try notification(#""oneTimeProductNotification": {"notificationType": 2, "purchaseToken": "t2"}"#).kind,
            .oneTimeProductCanceled(purchaseToken: "t2", productID: nil))
        XCTAssertEqual(
            try notification(
                #""voidedPurchaseNotification": {"purchaseToken": "t3", "orderId": "GPA.1", "productType": 2, "refundType": 2}"#
            ).kind,
            .voidedPurchase(purchaseToken: "t3", orderID: "GPA.1", isOneTimeProduct: true, isPartial: true))
        XCTAssertEqual(
            try notification(#""voidedPurchaseNotification": {"purchaseToken": "t4", "productType": 1}"#).kind,
            .voidedPurchase(purchaseToken: "t4", orderID: nil, isOneTimeProduct: false, isPartial: false))
        XCTAssertEqual(
            try notification(
                #""pendingRefundReviewNotification": {"pendingRefundToken": "prt", "orderId": "GPA.2", "#
                    + #""refundReason": "REFUND_REASON_UNINTENDED", "obfuscatedAccountId": "acc"}"#
            ).kind,
            .pendingRefundReview(
                pendingRefundToken: "prt", orderID: "GPA.2", refundReason: "REFUND_REASON_UNINTENDED",
                obfuscatedAccountID: "acc"))
        XCTAssertEqual(try notification(#""testNotification": {"version": "1.0"}"#).kind, .test)
        XCTAssertEqual(try notification(#""subscriptionNotification": {"notificationType": 4}"#).kind, .subscription)
        XCTAssertEqual(try notification(#""somethingNew": {}"#).kind, .other)
    }

    func testWhatCannotBeStoredIsAnError() {
        XCTAssertThrowsError(try GoogleDeveloperNotification.parse(Array(#"{"eventTimeMillis": "1"}"#.utf8)))
        XCTAssertThrowsError(try GoogleDeveloperNotification.parse(Array(#"{"packageName": "p", "eventTimeMillis": "x"}"#.utf8)))
        XCTAssertThrowsError(try notification(#""oneTimeProductNotification": {"notificationType": 1}"#))
        XCTAssertThrowsError(try notification(#""pendingRefundReviewNotification": {"orderId": "GPA.2"}"#))
    }

    func testThePushEnvelope() throws {
        let data = Array(#"{"packageName": "com.example.game", "eventTimeMillis": "5", "testNotification": {}}"#.utf8)
        // Pub/Sub's data is standard base64, padded.
        let encoded = Base64.encodeURL(data).replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        let padded = encoded + String(repeating: "=", count: (4 - encoded.count % 4) % 4)
        let message = try GooglePushMessage.parse(
            Array(
                (#"{"message": {"data": "\#(padded)", "messageId": "136969346945", "#
                    + #""publishTime": "2026-11-29T07:00:00Z", "attributes": {}}, "subscription": "projects/p/subscriptions/s"}"#)
                    .utf8))
        XCTAssertEqual(message.messageID, "136969346945")
        XCTAssertEqual(
            message.notification,
            GoogleDeveloperNotification(packageName: "com.example.game", eventTimeMilliseconds: 5, kind: .test))
        XCTAssertThrowsError(try GooglePushMessage.parse(Array(#"{"message": {"data": "\#(padded)"}}"#.utf8)))
        XCTAssertThrowsError(try GooglePushMessage.parse(Array(#"{"message": {"messageId": "1", "data": "%%%"}}"#.utf8)))
    }
}
