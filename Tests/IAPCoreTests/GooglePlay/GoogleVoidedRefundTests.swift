import XCTest

@testable import IAPCore

final class GoogleVoidedRefundTests: XCTestCase {
    func testAWholeRefundTakesBackOnlyWhatWasDelivered() {
        XCTAssertEqual(
            GoogleVoidedRefund.decide(.delivered, quantity: 5, refundedQuantity: 0, voidedQuantity: nil),
            .whole(takesBack: true, refundedQuantity: nil))
        XCTAssertEqual(
            GoogleVoidedRefund.decide(.unclaimed, quantity: 1, refundedQuantity: 0, voidedQuantity: nil),
            .whole(takesBack: false, refundedQuantity: nil))
        XCTAssertEqual(GoogleVoidedRefund.decide(.refunded, quantity: 1, refundedQuantity: 0, voidedQuantity: nil), .unchanged)
    }

    func testAPartialRefundTakesBackItsQuantityAndTheRestStays() {
        let refund = GoogleVoidedRefund.decide(.delivered, quantity: 5, refundedQuantity: 0, voidedQuantity: 2)
        XCTAssertEqual(refund, .part(quantity: 2, takesBack: true))
        XCTAssertEqual(refund.effect, .partiallyRefunded)
        XCTAssertEqual(
            GoogleVoidedRefund.decide(.unclaimed, quantity: 5, refundedQuantity: 2, voidedQuantity: 1),
            .part(quantity: 1, takesBack: false))
    }

    func testAPartialRefundOfAllThatIsLeftRefundsTheTransaction() {
        let refund = GoogleVoidedRefund.decide(.delivered, quantity: 5, refundedQuantity: 2, voidedQuantity: 3)
        XCTAssertEqual(refund, .whole(takesBack: true, refundedQuantity: 3))
        XCTAssertEqual(refund.effect, .refunded)
    }

    func testNeverMoreThanIsLeft() {
        XCTAssertEqual(
            GoogleVoidedRefund.decide(.delivered, quantity: 5, refundedQuantity: 4, voidedQuantity: 3),
            .whole(takesBack: true, refundedQuantity: 1))
        XCTAssertEqual(
            GoogleVoidedRefund.decide(.delivered, quantity: 5, refundedQuantity: 5, voidedQuantity: 1), .unchanged)
        XCTAssertEqual(
            GoogleVoidedRefund.decide(.refunded, quantity: 5, refundedQuantity: 2, voidedQuantity: 1).effect, .unchanged)
    }

    func testANotificationOfSeveralVoidedPurchasesTellsTheMostTheyDid() {
        XCTAssertEqual(GoogleNotificationEffect.most(of: [.unchanged, .refunded, .partiallyRefunded]), .refunded)
        XCTAssertEqual(GoogleNotificationEffect.most(of: [.unchanged, .partiallyRefunded, .stored]), .partiallyRefunded)
        XCTAssertEqual(GoogleNotificationEffect.most(of: [.stored, .unchanged]), .unchanged)
        XCTAssertEqual(GoogleNotificationEffect.most(of: [.stored]), .stored)
        XCTAssertEqual(GoogleNotificationEffect.most(of: []), .stored)
    }

    func testTheSyncWindowIsAtMostThirtyDaysBack() {
        let now: Int64 = 1_800_000_000_000
        let day: Int64 = 86_400_000
        XCTAssertEqual(GoogleVoidedWindow.syncStart(since: nil, nowMs: now), .success(now - 30 * day + 60_000))
        XCTAssertEqual(GoogleVoidedWindow.syncStart(since: now - 2 * day, nowMs: now), .success(now - 2 * day))
        // Exactly 30 days back is asked a minute later, as Google would refuse it once the request arrives.
        XCTAssertEqual(GoogleVoidedWindow.syncStart(since: now - 30 * day, nowMs: now), .success(now - 30 * day + 60_000))
        XCTAssertEqual(GoogleVoidedWindow.syncStart(since: now - 31 * day, nowMs: now), .failure(.tooFarBack))
        XCTAssertEqual(GoogleVoidedWindow.syncStart(since: now, nowMs: now), .failure(.notInThePast))
        XCTAssertEqual(GoogleVoidedWindow.notificationStart(eventTimeMs: now - 1000, nowMs: now), now - 1000 - day)
        XCTAssertEqual(GoogleVoidedWindow.notificationStart(eventTimeMs: now - 40 * day, nowMs: now), now - 30 * day + 60_000)
    }
}
