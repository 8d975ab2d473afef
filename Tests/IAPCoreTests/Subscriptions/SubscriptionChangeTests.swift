import XCTest

@testable import IAPCore

/// The chain's state machine on a calendar: monthly periods of chain "100", each
/// notification signed a little after what it reports, arriving in any order.
final class SubscriptionChangeTests: XCTestCase {
    private let day: Int64 = 86_400_000
    private let start: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    /// The period bought on day `30 * index` (month `index` of the chain), lasting 30 days.
    private func period(
        _ index: Int64, product: String = "vip_monthly", revokedOn revocation: Int64? = nil, expires: Int64? = nil
    ) -> SubscriptionPeriod {
        SubscriptionPeriod(
            transactionID: "\(100 + index)", originalTransactionID: "100", productID: product,
            purchaseDate: start + 30 * index * day, expiresDate: expires ?? start + 30 * (index + 1) * day,
            environment: "Production", revocationDate: revocation)
    }

    private func renewalInfo(
        autoRenews: Bool = true, next: String = "vip_monthly", grace: Int64? = nil, intent: Int64? = nil
    ) -> RenewalInfo {
        var members: [(key: String, value: JSONValue)] = [
            ("originalTransactionId", .string("100")), ("autoRenewProductId", .string(next)),
            ("productId", .string("vip_monthly")), ("autoRenewStatus", .number(autoRenews ? "1" : "0")),
            ("signedDate", .number(String(start))), ("environment", .string("Production")),
        ]
        if let grace { members.append(("gracePeriodExpiresDate", .number(String(grace)))) }
        if let intent { members.append(("expirationIntent", .number(String(intent)))) }
        return try! RenewalInfo(json: JSONObject(members))
    }

    private func notified(
        _ type: String, _ subtype: String? = nil, signedOnDay signedDay: Int64, _ period: SubscriptionPeriod?,
        _ info: RenewalInfo? = nil
    ) -> SubscriptionChange {
        SubscriptionChange.notification(
            type: type, subtype: subtype, signedDate: start + signedDay * day + 1_000, period: period,
            renewalInfo: info)!
    }

    /// The row `change` makes of `stored`, and whether the game hears of it; nil when it makes none.
    private func applied(
        _ change: SubscriptionChange, to stored: SubscriptionState?
    ) -> (chain: SubscriptionState, notifiesGame: Bool)? {
        guard case .changed(let chain, let notifiesGame) = change.outcome(from: stored) else { return nil }
        return (chain, notifiesGame)
    }

    /// The state after `changes`, applied in the order given, each to what the one before left.
    private func state(after changes: [SubscriptionChange]) -> SubscriptionState? {
        var state: SubscriptionState?
        for change in changes {
            if case .changed(let next, _) = change.outcome(from: state) { state = next }
        }
        return state
    }

    /// Subscribed on day 0, renewed on day 30: period 1 (transaction "101") is the latest.
    private var renewedOnce: SubscriptionState {
        state(after: [subscribed, notified("DID_RENEW", signedOnDay: 30, period(1))])!
    }

    private var subscribed: SubscriptionChange {
        notified("SUBSCRIBED", "INITIAL_BUY", signedOnDay: 0, period(0), renewalInfo())
    }

    // MARK: kinds

    func testNotificationTypesByTheirEffectOnTheChain() {
        func kind(_ type: String, _ subtype: String? = nil) -> SubscriptionChangeKind? {
            SubscriptionChangeKind(notificationType: type, subtype: subtype)
        }
        for type in ["SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED", "REFUND_REVERSED"] {
            XCTAssertEqual(kind(type), .renewed, type)
        }
        XCTAssertEqual(kind("DID_RENEW", "BILLING_RECOVERY"), .renewed)
        XCTAssertEqual(kind("DID_FAIL_TO_RENEW", "GRACE_PERIOD"), .gracePeriodStarted)
        XCTAssertEqual(kind("DID_FAIL_TO_RENEW"), .billingRetry)
        XCTAssertEqual(kind("GRACE_PERIOD_EXPIRED"), .billingRetry)
        XCTAssertEqual(kind("EXPIRED", "VOLUNTARY"), .expired(.voluntary))
        XCTAssertEqual(kind("EXPIRED", "BILLING_RETRY"), .expired(.billingRetry))
        XCTAssertEqual(kind("EXPIRED"), .expired(nil))
        XCTAssertEqual(kind("REFUND"), .revoked)
        XCTAssertEqual(kind("REVOKE"), .revoked)
        for type in ["DID_CHANGE_RENEWAL_STATUS", "DID_CHANGE_RENEWAL_PREF", "PRICE_INCREASE"] {
            XCTAssertEqual(kind(type), .renewalPreference, type)
        }
        XCTAssertEqual(kind("RENEWAL_EXTENDED"), .extended)
        for type in ["ONE_TIME_CHARGE", "CONSUMPTION_REQUEST", "REFUND_DECLINED", "RENEWAL_EXTENSION", "TEST", "NEW"] {
            XCTAssertNil(kind(type), type)
        }
    }

    // MARK: the table

    func testSubscribedStartsAnActiveChainUntilItsPeriodEnds() throws {
        let (chain, notifiesGame) = try XCTUnwrap(applied(subscribed, to: nil), "a new chain")
        XCTAssertTrue(notifiesGame)
        XCTAssertEqual(chain.status, .active)
        XCTAssertEqual(chain.expiresAt, start + 30 * day)
        XCTAssertEqual(chain.latestTransactionID, "100")
        XCTAssertEqual(chain.autoRenews, true)
        XCTAssertEqual(chain.autoRenewProductID, "vip_monthly")
        XCTAssertEqual(chain.lastSignedDate, start + 1_000)
    }

    func testRenewalMovesTheExpiryToTheNewPeriodsEnd() {
        XCTAssertEqual(renewedOnce.status, .active)
        XCTAssertEqual(renewedOnce.expiresAt, start + 60 * day)
        XCTAssertEqual(renewedOnce.latestTransactionID, "101")
    }

    func testAFailedRenewalWithoutGraceIsBillingRetryAndNotEntitled() {
        let chain = state(after: [subscribed, notified("DID_FAIL_TO_RENEW", signedOnDay: 30, period(0), renewalInfo())])!
        XCTAssertEqual(chain.status, .billingRetry)
        XCTAssertNil(chain.entitledUntil)
        XCTAssertFalse(chain.isEntitled(at: start + 30 * day - 1))
    }

    func testExpiredKeepsItsReasonFromTheSubtypeOrElseFromTheRenewalInfo() {
        let voluntary = state(after: [subscribed, notified("EXPIRED", "VOLUNTARY", signedOnDay: 31, period(0))])
        XCTAssertEqual(voluntary?.status, .expired)
        XCTAssertEqual(voluntary?.expirationIntent, .voluntary)
        let fromInfo = state(after: [subscribed, notified("EXPIRED", signedOnDay: 31, period(0), renewalInfo(intent: 4))])
        XCTAssertEqual(fromInfo?.expirationIntent, .productNotForSale)
    }

    func testRenewalStatusChangeKeepsTheStatusAndTakesAutoRenewalFromTheRenewalInfo() throws {
        let off = notified("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signedOnDay: 10, period(0),
                           renewalInfo(autoRenews: false))
        let (chain, notifiesGame) = try XCTUnwrap(applied(off, to: state(after: [subscribed])), "a change")
        XCTAssertTrue(notifiesGame, "auto_renew is in the game's event")
        XCTAssertEqual(chain.status, .active)
        XCTAssertEqual(chain.autoRenews, false)
        XCTAssertEqual(chain.expiresAt, start + 30 * day)
    }

    func testADowngradeChangesOnlyWhatRenewsNext() throws {
        let downgrade = notified("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", signedOnDay: 10, period(0),
                                 renewalInfo(next: "vip_basic"))
        let (chain, notifiesGame) = try XCTUnwrap(applied(downgrade, to: state(after: [subscribed])), "a change")
        XCTAssertFalse(notifiesGame, "status, expiry and auto-renewal are as they were")
        XCTAssertEqual(chain.productID, "vip_monthly")
        XCTAssertEqual(chain.autoRenewProductID, "vip_basic")
    }

    func testRenewalExtendedMovesTheExpiryOfTheSamePeriod() {
        let extended = notified("RENEWAL_EXTENDED", signedOnDay: 20, period(0, expires: start + 37 * day))
        let chain = state(after: [subscribed, extended])
        XCTAssertEqual(chain?.expiresAt, start + 37 * day)
        XCTAssertEqual(chain?.status, .active)
    }

    func testAChangeThatMovesNothingIsUnchanged() {
        let again = notified("SUBSCRIBED", "INITIAL_BUY", signedOnDay: 0, period(0), renewalInfo())
        XCTAssertEqual(again.outcome(from: state(after: [subscribed])), .unchanged)
    }

    func testAChangeWithoutPeriodForAChainNeverSeenHasNothingToStartFrom() {
        let change = SubscriptionChange.notification(
            type: "DID_CHANGE_RENEWAL_STATUS", subtype: nil, signedDate: start, period: nil, renewalInfo: renewalInfo())
        XCTAssertEqual(change?.outcome(from: nil), .noChain)
    }

    // MARK: the calendar

    func testARenewalArrivingBeforeItsSubscribedLeavesTheRenewalInPlace() {
        let renewal = notified("DID_RENEW", signedOnDay: 30, period(1))
        let chain = state(after: [renewal])!
        XCTAssertEqual(chain.latestTransactionID, "101")
        XCTAssertEqual(subscribed.outcome(from: chain), .stale)
    }

    func testExpiredBeforeTheLastRenewalIsAppliedStaysExpired() {
        let renewal = notified("DID_RENEW", signedOnDay: 30, period(1))
        let expired = notified("EXPIRED", "VOLUNTARY", signedOnDay: 60, period(1), renewalInfo(autoRenews: false))
        let chain = state(after: [subscribed, expired])!
        XCTAssertEqual(chain.status, .expired)
        XCTAssertEqual(chain.expiresAt, start + 60 * day, "the expired notification carries the latest period")
        XCTAssertEqual(renewal.outcome(from: chain), .stale)
    }

    func testARefundOfTheLatestPeriodRevokesTheChain() throws {
        let refund = notified("REFUND", signedOnDay: 35, period(1, revokedOn: start + 35 * day))
        let (chain, notifiesGame) = try XCTUnwrap(applied(refund, to: renewedOnce), "a change")
        XCTAssertTrue(notifiesGame)
        XCTAssertEqual(chain.status, .revoked)
        XCTAssertFalse(chain.isEntitled(at: start + 36 * day))
    }

    func testARefundOfAnOlderPeriodLeavesTheChainActive() throws {
        let refund = notified("REFUND", signedOnDay: 35, period(0, revokedOn: start + 35 * day))
        let (chain, notifiesGame) = try XCTUnwrap(applied(refund, to: renewedOnce), "its date is the chain's last")
        XCTAssertFalse(notifiesGame)
        XCTAssertEqual(chain.status, .active)
        XCTAssertEqual(chain.latestTransactionID, "101")
    }

    func testARefundReversedMakesTheLatestPeriodActiveAgain() {
        let refunded = period(1, revokedOn: start + 35 * day)
        let chain = state(after: [
            subscribed, notified("DID_RENEW", signedOnDay: 30, period(1)), notified("REFUND", signedOnDay: 35, refunded),
            notified("REFUND_REVERSED", signedOnDay: 40, period(1)),
        ])
        XCTAssertEqual(chain?.status, .active)
        XCTAssertEqual(chain?.expiresAt, start + 60 * day)
    }

    func testAnUpgradeWithinTheGroupStartsTheNewProductsPeriodAtOnce() throws {
        let upgraded = SubscriptionPeriod(
            transactionID: "150", originalTransactionID: "100", productID: "vip_premium",
            purchaseDate: start + 10 * day, expiresDate: start + 40 * day, environment: "Production")
        let upgrade = notified("DID_CHANGE_RENEWAL_PREF", "UPGRADE", signedOnDay: 10, upgraded,
                               renewalInfo(next: "vip_premium"))
        let (chain, notifiesGame) = try XCTUnwrap(applied(upgrade, to: state(after: [subscribed])), "a change")
        XCTAssertTrue(notifiesGame, "the expiry moved")
        XCTAssertEqual(chain.productID, "vip_premium")
        XCTAssertEqual(chain.latestTransactionID, "150")
        XCTAssertEqual(chain.expiresAt, start + 40 * day)
        XCTAssertEqual(chain.autoRenewProductID, "vip_premium")
        // The upgraded-from period, revoked by the upgrade, seen later in a receipt: an older period.
        let replaced = SubscriptionChange.periodSeen(period(0, revokedOn: start + 11 * day))
        let (after, notifiesGameAgain) = try XCTUnwrap(applied(replaced, to: chain), "its date is the chain's last")
        XCTAssertFalse(notifiesGameAgain)
        XCTAssertEqual(after.status, .active)
        XCTAssertEqual(after.productID, "vip_premium")
        XCTAssertEqual(after.expiresAt, start + 40 * day)
    }

    func testAGracePeriodEntitlesUntilItsEndAndThenBillingRetryDoesNot() {
        let graceEnd = start + 46 * day
        let failed = notified("DID_FAIL_TO_RENEW", "GRACE_PERIOD", signedOnDay: 30, period(0), renewalInfo(grace: graceEnd))
        let inGrace = state(after: [subscribed, failed])!
        XCTAssertEqual(inGrace.status, .gracePeriod)
        XCTAssertEqual(inGrace.gracePeriodExpiresAt, graceEnd)
        XCTAssertEqual(inGrace.entitledUntil, graceEnd)
        XCTAssertTrue(inGrace.isEntitled(at: start + 40 * day), "past the period, inside the grace period")
        XCTAssertFalse(inGrace.isEntitled(at: graceEnd), "the grace period ended, with no notification yet")
        let ended = state(after: [subscribed, failed, notified("GRACE_PERIOD_EXPIRED", signedOnDay: 46, period(0))])!
        XCTAssertEqual(ended.status, .billingRetry)
        XCTAssertNil(ended.gracePeriodExpiresAt)
        XCTAssertFalse(ended.isEntitled(at: start + 40 * day))
    }

    func testBillingRecoveredInGraceIsActiveWithTheNewPeriod() {
        let failed = notified("DID_FAIL_TO_RENEW", "GRACE_PERIOD", signedOnDay: 30, period(0),
                              renewalInfo(grace: start + 46 * day))
        let recovered = notified("DID_RENEW", "BILLING_RECOVERY", signedOnDay: 33,
                                 period(1, expires: start + 63 * day))
        let chain = state(after: [subscribed, failed, recovered])
        XCTAssertEqual(chain?.status, .active)
        XCTAssertNil(chain?.gracePeriodExpiresAt)
        XCTAssertEqual(chain?.expiresAt, start + 63 * day)
    }

    func testAChainPastItsExpiryWithNoNotificationIsNotEntitled() {
        let chain = state(after: [subscribed])!
        XCTAssertEqual(chain.status, .active, "nothing said otherwise")
        XCTAssertTrue(chain.isEntitled(at: start + 30 * day - 1))
        XCTAssertFalse(chain.isEntitled(at: start + 30 * day))
        XCTAssertFalse(chain.isEntitled(at: start + 90 * day))
    }

    // MARK: periods seen in receipts and JWS

    func testANewerPeriodInAReceiptRenewsAChainInBillingRetry() throws {
        let retrying = state(after: [subscribed, notified("DID_FAIL_TO_RENEW", signedOnDay: 30, period(0))])!
        // Billing recovered on day 34; the app posts the new period before any notification says so.
        let recovered = SubscriptionPeriod(
            transactionID: "101", originalTransactionID: "100", productID: "vip_monthly",
            purchaseDate: start + 34 * day, expiresDate: start + 64 * day, environment: "Production")
        let seen = SubscriptionChange.periodSeen(recovered)
        let (chain, notifiesGame) = try XCTUnwrap(applied(seen, to: retrying), "a change")
        XCTAssertTrue(notifiesGame)
        XCTAssertEqual(chain.status, .active)
        XCTAssertEqual(chain.expiresAt, start + 64 * day)
        XCTAssertEqual(chain.lastSignedDate, start + 34 * day, "its place is its purchase date")
        // A failure signed before that purchase is older news now.
        XCTAssertEqual(notified("DID_FAIL_TO_RENEW", signedOnDay: 32, period(0)).outcome(from: chain), .stale)
        // A failure signed after that purchase stands against a receipt that shows it later.
        let retryingAgain = state(after: [subscribed, notified("DID_FAIL_TO_RENEW", signedOnDay: 35, period(0))])!
        XCTAssertEqual(seen.outcome(from: retryingAgain), .stale)
    }

    func testAnOldPeriodShownAgainChangesNothingLater() {
        let expired = state(after: [
            subscribed, notified("DID_RENEW", signedOnDay: 30, period(1)),
            notified("EXPIRED", "VOLUNTARY", signedOnDay: 60, period(1)),
        ])!
        XCTAssertEqual(SubscriptionChange.periodSeen(period(1)).outcome(from: expired), .stale)
        XCTAssertEqual(SubscriptionChange.periodSeen(period(0)).outcome(from: expired), .stale)
    }

    func testARefundSeenInAReceiptTakesItsPlaceByItsCancellationDate() throws {
        let seen = SubscriptionChange.periodSeen(period(1, revokedOn: start + 45 * day))
        let (chain, _) = try XCTUnwrap(applied(seen, to: renewedOnce), "a change")
        XCTAssertEqual(chain.status, .revoked)
        XCTAssertEqual(chain.lastSignedDate, start + 45 * day)
    }

    func testRenewalInfoOfAnotherChainIsNotTaken() throws {
        let other = try! RenewalInfo(json: [
            "originalTransactionId": .string("999"), "autoRenewStatus": .int(0), "signedDate": .int(1),
            "environment": .string("Production"),
        ])
        let change = notified("DID_CHANGE_RENEWAL_STATUS", signedOnDay: 5, period(0), other)
        let (chain, notifiesGame) = try XCTUnwrap(
            applied(change, to: state(after: [subscribed])), "its date is the chain's last")
        XCTAssertFalse(notifiesGame)
        XCTAssertEqual(chain.autoRenews, true)
    }
}
