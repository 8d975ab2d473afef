import XCTest

@testable import IAPCore

final class GoogleNotifiedPurchaseDecisionTests: XCTestCase {
    let order = GoogleAccountProof.AccountOrder(orderID: "9b2f6a43-4d0c-4bb5-a0a8-a3a1f3c0e3f1", userID: "u-1")

    func purchase(_ state: GooglePurchase.State, product: String = "gems_100") -> GooglePurchase {
        GooglePurchase(lineItems: [.init(productID: product, quantity: 1)], state: state, orderID: "GPA.1")
    }

    func decide(_ purchase: GooglePurchase, accountOrder: GoogleAccountProof.AccountOrder?)
        -> GoogleNotifiedPurchaseDecision.Verdict
    {
        GoogleNotifiedPurchaseDecision.decide(purchase, accountOrder: accountOrder, sells: { $0 == "gems_100" })
    }

    func testPurchasedAndCanceledPushesOfAConfiguredPackageArePlanned() {
        let purchased = GoogleDeveloperNotification(
            packageName: "com.example.game", eventTimeMilliseconds: 1,
            kind: .oneTimeProductPurchased(purchaseToken: "tok", productID: "gems_100"))
        let canceled = GoogleDeveloperNotification(
            packageName: "com.example.game", eventTimeMilliseconds: 1,
            kind: .oneTimeProductCanceled(purchaseToken: "tok", productID: "gems_100"))
        XCTAssertEqual(GoogleNotificationPlan.plan(purchased, packages: ["com.example.game"]), .readPurchase(purchaseToken: "tok"))
        XCTAssertEqual(GoogleNotificationPlan.plan(canceled, packages: ["com.example.game"]), .store(.cancelled))
        XCTAssertEqual(GoogleNotificationPlan.plan(purchased, packages: ["com.example.other"]), .store(.ignored))
    }

    func testAPaidPurchaseGoesToTheOrderItsAccountIDNames() {
        XCTAssertEqual(decide(purchase(.purchased), accountOrder: order), .deliver(to: order, productID: "gems_100"))
    }

    func testAPaidPurchaseNamingNoOrderHereIsHeldUnclaimed() {
        XCTAssertEqual(decide(purchase(.purchased), accountOrder: nil), .holdUnclaimed(productID: "gems_100"))
    }

    func testWhatIsNotPaidIsNeverDeliveredWhateverOrderItNames() {
        XCTAssertEqual(decide(purchase(.pending), accountOrder: order), .pending)
        XCTAssertEqual(decide(purchase(.cancelled), accountOrder: order), .cancelled)
        XCTAssertEqual(decide(purchase(.pending), accountOrder: order).effectWithoutDelivery, .pending)
        XCTAssertEqual(decide(purchase(.cancelled), accountOrder: nil).effectWithoutDelivery, .cancelled)
    }

    func testAProductNotSoldHereIsOnlyStored() {
        let verdict = decide(purchase(.purchased, product: "gems_999"), accountOrder: order)
        XCTAssertEqual(verdict, .store)
        XCTAssertEqual(verdict.effectWithoutDelivery, .stored)
        XCTAssertNil(decide(purchase(.purchased), accountOrder: nil).effectWithoutDelivery)
    }
}
