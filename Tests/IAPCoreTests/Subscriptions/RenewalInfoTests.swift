import XCTest

@testable import IAPCore

final class RenewalInfoTests: XCTestCase {
    /// A JWSRenewalInfoDecodedPayload as Apple writes it, with fields this type does not name.
    private let grace = """
        {"originalTransactionId":"2000000123456789","autoRenewProductId":"vip_monthly","productId":"vip_monthly",
         "autoRenewStatus":1,"isInBillingRetryPeriod":true,"gracePeriodExpiresDate":1769904000000,
         "signedDate":1769299200000,"environment":"Sandbox","recentSubscriptionStartDate":1767225600000,
         "renewalDate":1769817600000,"currency":"USD","renewalPrice":4990,"offerDiscountType":null,
         "eligibleWinBackOfferIds":[],"appTransactionId":"704289572311362047"}
        """

    private func parse(_ text: String) throws -> RenewalInfo {
        try RenewalInfo(json: JSONParser.parse(Array(text.utf8)).objectValue!)
    }

    func testReadsTheFieldsOfARenewalInGracePeriod() throws {
        let info = try parse(grace)
        XCTAssertEqual(info.originalTransactionID, "2000000123456789")
        XCTAssertEqual(info.productID, "vip_monthly")
        XCTAssertEqual(info.autoRenewProductID, "vip_monthly")
        XCTAssertEqual(info.autoRenews, true)
        XCTAssertEqual(info.isInBillingRetryPeriod, true)
        XCTAssertEqual(info.gracePeriodExpiresDate, 1_769_904_000_000)
        XCTAssertEqual(info.renewalDate, 1_769_817_600_000)
        XCTAssertEqual(info.signedDate, 1_769_299_200_000)
        XCTAssertEqual(info.environment, "Sandbox")
        XCTAssertNil(info.expirationIntent)
    }

    func testAnExpiredChainsIntentAndRenewalTurnedOff() throws {
        let info = try parse("""
            {"originalTransactionId":"7","autoRenewStatus":0,"expirationIntent":1,"signedDate":5,"environment":"Production"}
            """)
        XCTAssertEqual(info.autoRenews, false)
        XCTAssertEqual(info.expirationIntent, .voluntary)
        XCTAssertNil(info.autoRenewProductID)
        XCTAssertNil(info.gracePeriodExpiresDate)
    }

    func testExpirationIntentCodesReadAsTheExpiredSubtypes() {
        XCTAssertEqual(ExpirationIntent(renewalInfoCode: 1), .voluntary)
        XCTAssertEqual(ExpirationIntent(renewalInfoCode: 2), .billingRetry)
        XCTAssertEqual(ExpirationIntent(renewalInfoCode: 3), .priceIncrease)
        XCTAssertEqual(ExpirationIntent(renewalInfoCode: 4), .productNotForSale)
        XCTAssertEqual(ExpirationIntent(renewalInfoCode: 5), .other)
        XCTAssertEqual(ExpirationIntent(renewalInfoCode: 42), .other)
    }

    func testNullReadsAsAbsent() throws {
        let info = try parse("""
            {"originalTransactionId":"7","autoRenewStatus":null,"gracePeriodExpiresDate":null,"signedDate":5,
             "environment":"Production"}
            """)
        XCTAssertNil(info.autoRenews)
        XCTAssertNil(info.gracePeriodExpiresDate)
    }

    func testRefusesAPayloadWithoutWhatTheChainNeedsOrWithWrongTypes() {
        let cases: [(String, String)] = [
            (#"{"signedDate":5,"environment":"Production"}"#, "originalTransactionId"),
            (#"{"originalTransactionId":"","signedDate":5,"environment":"Production"}"#, "originalTransactionId"),
            (#"{"originalTransactionId":"7","environment":"Production"}"#, "signedDate"),
            (#"{"originalTransactionId":"7","signedDate":5}"#, "environment"),
            (#"{"originalTransactionId":7,"signedDate":5,"environment":"Production"}"#, "originalTransactionId"),
            (#"{"originalTransactionId":"7","signedDate":"5","environment":"Production"}"#, "signedDate"),
            (#"{"originalTransactionId":"7","signedDate":5.5,"environment":"Production"}"#, "signedDate"),
            (#"{"originalTransactionId":"7","autoRenewStatus":true,"signedDate":5,"environment":"Production"}"#,
             "autoRenewStatus"),
            (#"{"originalTransactionId":"7","isInBillingRetryPeriod":1,"signedDate":5,"environment":"Production"}"#,
             "isInBillingRetryPeriod"),
        ]
        for (text, field) in cases {
            XCTAssertThrowsError(try parse(text), text) { error in
                XCTAssertEqual(error as? RenewalInfo.DecodingError, RenewalInfo.DecodingError(field: field), text)
            }
        }
    }

    func testAppleStatusNumbersOfGetAllSubscriptionStatuses() {
        XCTAssertEqual(SubscriptionStatus(appleStatus: 1), .active)
        XCTAssertEqual(SubscriptionStatus(appleStatus: 2), .expired)
        XCTAssertEqual(SubscriptionStatus(appleStatus: 3), .billingRetry)
        XCTAssertEqual(SubscriptionStatus(appleStatus: 4), .gracePeriod)
        XCTAssertEqual(SubscriptionStatus(appleStatus: 5), .revoked)
        XCTAssertNil(SubscriptionStatus(appleStatus: 0))
        XCTAssertEqual(SubscriptionStatus.gracePeriod.rawValue, "grace_period")
        XCTAssertEqual(SubscriptionStatus.billingRetry.rawValue, "billing_retry")
    }
}
