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

    func testPartialVoidsSubscriptionsAndTestsAreStored() {
        for kind: GoogleDeveloperNotification.Kind in [
            .voidedPurchase(purchaseToken: "tok", orderID: nil, isOneTimeProduct: true, isPartial: true),
            .voidedPurchase(purchaseToken: "tok", orderID: nil, isOneTimeProduct: false, isPartial: false),
            .subscription, .test, .other, .oneTimeProductOther(notificationType: 3),
        ] {
            XCTAssertEqual(GoogleNotificationPlan.plan(notification(kind), packages: packages), .store(.stored), "\(kind)")
        }
    }

    func testAFullRefundTakesBackOnlyWhatWasDelivered() {
        XCTAssertEqual(GoogleFullRefund.decide(.delivered), .refund(takesBack: true))
        XCTAssertEqual(GoogleFullRefund.decide(.unclaimed), .refund(takesBack: false))
        XCTAssertEqual(GoogleFullRefund.decide(.refunded), .unchanged)
        XCTAssertEqual(GoogleFullRefund.decide(.refunded).effect, .unchanged)
        XCTAssertEqual(GoogleFullRefund.decide(.delivered).effect, .refunded)
    }
}
