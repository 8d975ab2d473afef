import XCTest

@testable import IAPCore

final class GoogleNotificationPlanTests: XCTestCase {
    func notification(_ kind: GoogleDeveloperNotification.Kind, package: String = "com.example.game")
        -> GoogleDeveloperNotification
    {
        GoogleDeveloperNotification(packageName: package, eventTimeMilliseconds: 1_764_400_000_000, kind: kind)
    }

    let packages = ["com.example.game"]

    func testAFullVoidOfAOneTimeProductRefunds() {
        let voided = notification(.voidedPurchase(
            purchaseToken: "tok", orderID: "GPA.1", isOneTimeProduct: true, isPartial: false))
        XCTAssertEqual(GoogleNotificationPlan.plan(voided, packages: packages), .fullRefund(purchaseToken: "tok", orderID: "GPA.1"))
    }

    func testAnotherPackageIsIgnoredWhateverItSays() {
        let voided = notification(
            .voidedPurchase(purchaseToken: "tok", orderID: nil, isOneTimeProduct: true, isPartial: false),
            package: "com.example.other")
        XCTAssertEqual(GoogleNotificationPlan.plan(voided, packages: packages), .store(.ignored))
        XCTAssertEqual(GoogleNotificationPlan.plan(notification(.test), packages: []), .store(.ignored))
    }

    func testAPartialVoidOfAOneTimeProductReadsTheVoidedPurchases() {
        let voided = notification(.voidedPurchase(
            purchaseToken: "tok", orderID: "GPA.1", isOneTimeProduct: true, isPartial: true))
        XCTAssertEqual(
            GoogleNotificationPlan.plan(voided, packages: packages), .partialRefund(purchaseToken: "tok", orderID: "GPA.1"))
    }

    func testSubscriptionVoidsSubscriptionsAndTestsAreStored() {
        for kind: GoogleDeveloperNotification.Kind in [
            .voidedPurchase(purchaseToken: "tok", orderID: nil, isOneTimeProduct: false, isPartial: true),
            .voidedPurchase(purchaseToken: "tok", orderID: nil, isOneTimeProduct: false, isPartial: false),
            .subscription, .test, .other, .oneTimeProductOther(notificationType: 3),
        ] {
            XCTAssertEqual(GoogleNotificationPlan.plan(notification(kind), packages: packages), .store(.stored), "\(kind)")
        }
    }
}
