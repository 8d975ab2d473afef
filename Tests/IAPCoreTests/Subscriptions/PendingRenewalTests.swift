import XCTest

@testable import IAPCore

/// verifyReceipt's `pending_renewal_info` as changes of the chains the answer shows.
final class PendingRenewalTests: XCTestCase {
    private func changes(_ text: String, now: Int64 = 1_000, places: [String: Int64] = ["7": 500]) throws
        -> [SubscriptionChange]
    {
        let answer = try JSONParser.parse(Array(text.utf8)).objectValue!
        return PendingRenewal.changes(in: answer, environment: "Production", now: now, place: { places[$0] })
    }

    func testARenewingChainChangesOnlyWhatRenewsNextAtThePlaceOfItsNewestPeriod() throws {
        let read = try changes("""
            {"status":0,"pending_renewal_info":[{"original_transaction_id":"7","product_id":"vip",
             "auto_renew_product_id":"vip_year","auto_renew_status":"0"}]}
            """)
        XCTAssertEqual(read.count, 1)
        XCTAssertEqual(read[0].kind, .renewalPreference)
        XCTAssertEqual(read[0].date, 500)
        XCTAssertEqual(read[0].renewalInfo?.autoRenews, false)
        XCTAssertEqual(read[0].renewalInfo?.autoRenewProductID, "vip_year")
        XCTAssertEqual(read[0].chainID, "7")
    }

    func testBillingRetryWithAGracePeriodNotYetEndedIsAGracePeriodAndAfterItBillingRetry() throws {
        let text = """
            {"pending_renewal_info":[{"original_transaction_id":"7","is_in_billing_retry_period":"1",
             "grace_period_expires_date_ms":"2000"}]}
            """
        XCTAssertEqual(try changes(text, now: 1_999)[0].kind, .gracePeriodStarted)
        XCTAssertEqual(try changes(text, now: 1_999)[0].renewalInfo?.gracePeriodExpiresDate, 2_000)
        XCTAssertEqual(try changes(text, now: 2_000)[0].kind, .billingRetry)
    }

    func testAnExpirationIntentExpiresTheChainWithItsReason() throws {
        let read = try changes("""
            {"pending_renewal_info":[{"original_transaction_id":"7","expiration_intent":"1","auto_renew_status":"0"}]}
            """)
        XCTAssertEqual(read[0].kind, .expired(.voluntary))
    }

    func testEntriesOfChainsTheAnswerDoesNotShowOrNamingNoChainAreSkipped() throws {
        XCTAssertEqual(try changes("""
            {"pending_renewal_info":[{"original_transaction_id":"8"},{"product_id":"vip"},"junk"]}
            """).count, 0)
        XCTAssertEqual(try changes(#"{"status":0}"#).count, 0)
    }
}
