import XCTest

@testable import IAPCore

/// Several changes of one chain at once (a receipt's periods, a notification's period and renewal
/// info), and a period read from any transaction object.
final class SubscriptionHistoryTests: XCTestCase {
    private let day: Int64 = 86_400_000
    private let start: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    private func period(_ index: Int64, product: String = "vip_monthly", revokedOn: Int64? = nil) -> SubscriptionPeriod {
        SubscriptionPeriod(
            transactionID: "\(100 + index)", originalTransactionID: "100", productID: product,
            purchaseDate: start + 30 * index * day, expiresDate: start + 30 * (index + 1) * day,
            environment: "Production", revocationDate: revokedOn)
    }

    func testAReceiptsPeriodsInAnyOrderLeaveTheNewestAsTheLatestWithOneChange() {
        let seen = [period(2), period(0), period(1)].map(SubscriptionChange.periodSeen)
        guard case .changed(let chain, let notifies) = SubscriptionHistory.outcome(of: seen, from: nil) else {
            return XCTFail("a new chain")
        }
        XCTAssertTrue(notifies)
        XCTAssertEqual(chain.latestTransactionID, "102")
        XCTAssertEqual(chain.expiresAt, start + 90 * day)
        XCTAssertEqual(chain.status, .active)
    }

    func testTheSameReceiptAgainChangesNothing() {
        let seen = [period(0), period(1)].map(SubscriptionChange.periodSeen)
        guard case .changed(let chain, _) = SubscriptionHistory.outcome(of: seen, from: nil) else {
            return XCTFail("a new chain")
        }
        XCTAssertEqual(SubscriptionHistory.outcome(of: seen, from: chain), .unchanged)
    }

    func testOlderPeriodsThanTheLastChangeAreStale() {
        var chain = SubscriptionState(startingWith: period(2))
        chain.lastSignedDate = start + 61 * day
        XCTAssertEqual(SubscriptionHistory.outcome(of: [.periodSeen(period(0)), .periodSeen(period(1))], from: chain), .stale)
    }

    func testARefundedLatestPeriodAmongOthersRevokesTheChainAndTellsTheGame() {
        let stored = SubscriptionState(startingWith: period(0))
        let seen = [period(0), period(1, revokedOn: start + 35 * day)].map(SubscriptionChange.periodSeen)
        guard case .changed(let chain, let notifies) = SubscriptionHistory.outcome(of: seen, from: stored) else {
            return XCTFail("changed")
        }
        XCTAssertEqual(chain.status, .revoked)
        XCTAssertEqual(chain.latestTransactionID, "101")
        XCTAssertTrue(notifies)
    }

    func testNoChangeNamingAPeriodStartsNoChain() {
        let expired = SubscriptionChange(kind: .expired(nil), date: start, period: nil, renewalInfo: nil)
        XCTAssertEqual(SubscriptionHistory.outcome(of: [expired], from: nil), .noChain)
        XCTAssertNil(expired.chainID)
        XCTAssertEqual(SubscriptionChange.periodSeen(period(1)).chainID, "100")
    }

    func testAPeriodIsReadFromAJWSAVerifyReceiptEntryAndACheckedReceiptsPurchase() {
        let jws = AppleTransaction(
            transactionID: "101", originalTransactionID: "100", productID: "vip", purchaseDateMs: 10,
            raw: JSONObject([("expiresDate", .number("20"))]))
        XCTAssertEqual(SubscriptionPeriod(transaction: jws, environment: "Sandbox")?.expiresDate, 20)
        let verifyReceipt = AppleTransaction(
            transactionID: "101", originalTransactionID: "100", productID: "vip", purchaseDateMs: 10,
            raw: JSONObject([("expires_date_ms", .string("30"))]))
        XCTAssertEqual(SubscriptionPeriod(transaction: verifyReceipt, environment: "Sandbox")?.expiresDate, 30)
        let checked = AppleTransaction(
            transactionID: "101", originalTransactionID: "100", productID: "vip", purchaseDateMs: 10,
            cancellationDateMs: 15, raw: JSONObject([("expires_date", .string("2026-01-01 00:00:00 Etc/GMT"))]))
        let read = SubscriptionPeriod(transaction: checked, environment: "Production")
        XCTAssertEqual(read?.expiresDate, start)
        XCTAssertEqual(read?.revocationDate, 15)
        let consumable = AppleTransaction(transactionID: "7", productID: "coins", purchaseDateMs: 10)
        XCTAssertNil(SubscriptionPeriod(transaction: consumable, environment: "Production"))
    }

    func testSubscriptionNotificationsCarryAPeriodToDeliverOnceAndRefundsKeepTheirKind() {
        XCTAssertEqual(NotificationKind(notificationType: "DID_RENEW", subtype: nil), .charge)
        XCTAssertEqual(NotificationKind(notificationType: "EXPIRED", subtype: "VOLUNTARY"), .charge)
        XCTAssertTrue(NotificationKind.isPeriodCarrier(notificationType: "SUBSCRIBED", subtype: "INITIAL_BUY"))
        XCTAssertEqual(NotificationKind(notificationType: "REFUND", subtype: nil), .refund)
        XCTAssertFalse(NotificationKind.isPeriodCarrier(notificationType: "REFUND", subtype: nil))
        XCTAssertEqual(NotificationKind(notificationType: "ONE_TIME_CHARGE", subtype: nil), .charge)
        XCTAssertFalse(NotificationKind.isPeriodCarrier(notificationType: "ONE_TIME_CHARGE", subtype: nil))
        XCTAssertEqual(NotificationKind(notificationType: "CONSUMPTION_REQUEST", subtype: nil), .informational)
    }
}
