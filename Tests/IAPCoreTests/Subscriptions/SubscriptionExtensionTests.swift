import XCTest

@testable import IAPCore

final class SubscriptionExtensionTests: XCTestCase {
    private let identifier = "7c1f3f0e-6d0b-4f7e-9c55-0d1d2b1f6a10"

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    func testTheBodiesAppleTakes() throws {
        let request = try SubscriptionExtensionRequest(days: 7, reasonCode: 3, requestIdentifier: identifier)
        XCTAssertEqual(request.reason, .serviceIssueOrOutage)
        XCTAssertEqual(
            text(request.body), #"{"extendByDays":7,"extendReasonCode":3,"requestIdentifier":"\#(identifier)"}"#)
        XCTAssertEqual(
            text(try request.massBody(productID: "com.example.vip_monthly")),
            #"{"extendByDays":7,"extendReasonCode":3,"requestIdentifier":"\#(identifier)","productId":"com.example.vip_monthly"}"#)
        XCTAssertEqual(
            try SubscriptionExtensionRequest.path(originalTransactionID: "2000000000000001"),
            "/inApps/v1/subscriptions/extend/2000000000000001")
        XCTAssertEqual(
            try request.massStatusPath(productID: "vip"), "/inApps/v1/subscriptions/extend/mass/vip/\(identifier)")
    }

    func testDaysOutsideOneToNinetyAreRefusedBeforeAppleIsCalled() {
        for days in [0, -1, 91, 365] {
            XCTAssertThrowsError(try SubscriptionExtensionRequest(days: days, reasonCode: 0, requestIdentifier: identifier)) {
                XCTAssertEqual($0 as? SubscriptionExtensionRequest.Invalid, .days(days))
            }
        }
        XCTAssertNoThrow(try SubscriptionExtensionRequest(days: 1, reasonCode: 0, requestIdentifier: identifier))
        XCTAssertNoThrow(try SubscriptionExtensionRequest(days: 90, reasonCode: 0, requestIdentifier: identifier))
        XCTAssertEqual(
            SubscriptionExtensionRequest.Invalid.days(91).description, "--days must be 1 to 90 (Apple's limit), not 91")
    }

    func testReasonCodesOutsideZeroToThreeAndBadIdentifiersAreRefused() {
        for code in [-1, 4] {
            XCTAssertThrowsError(try SubscriptionExtensionRequest(days: 3, reasonCode: code, requestIdentifier: identifier)) {
                XCTAssertEqual($0 as? SubscriptionExtensionRequest.Invalid, .reason(code))
            }
        }
        for bad in ["", String(repeating: "a", count: 129), "a/b", "a b"] {
            XCTAssertThrowsError(try SubscriptionExtensionRequest(days: 3, reasonCode: 0, requestIdentifier: bad)) {
                XCTAssertEqual($0 as? SubscriptionExtensionRequest.Invalid, .requestIdentifier)
            }
        }
    }

    func testANewRequestIdentifierIsAVersion4UUIDApplesRulesTake() throws {
        let first = SubscriptionExtensionRequest.newRequestIdentifier()
        XCTAssertEqual(first.count, 36)
        XCTAssertEqual(first.split(separator: "-").map(\.count), [8, 4, 4, 4, 12])
        XCTAssertEqual(Array(first)[14], "4")
        XCTAssertNotEqual(first, SubscriptionExtensionRequest.newRequestIdentifier())
        XCTAssertNoThrow(try SubscriptionExtensionRequest(days: 1, reasonCode: 0, requestIdentifier: first))
    }

    func testIdsThatWouldChangeTheURLAreNeverSent() throws {
        let request = try SubscriptionExtensionRequest(days: 3, reasonCode: 0, requestIdentifier: identifier)
        XCTAssertThrowsError(try SubscriptionExtensionRequest.path(originalTransactionID: "../mass"))
        XCTAssertThrowsError(try request.massStatusPath(productID: "vip/../x"))
        XCTAssertThrowsError(try request.massBody(productID: ""))
    }

    func testAnExtensionAnswer() {
        let body = Array(#"{"originalTransactionId":"1","webOrderLineItemId":"2","success":true,"effectiveDate":1769904000000}"#.utf8)
        XCTAssertEqual(
            SubscriptionExtensionAnswer.singleChain(httpStatus: 200, body: body), .extended(effectiveDate: 1_769_904_000_000))
        let failed = Array(#"{"success":false}"#.utf8)
        guard case .refused(nil, _)? = SubscriptionExtensionAnswer.singleChain(httpStatus: 200, body: failed) else {
            return XCTFail("success false is a refusal")
        }
        XCTAssertNil(SubscriptionExtensionAnswer.singleChain(httpStatus: 200, body: Array(#"{"success":true}"#.utf8)))
    }

    func testApplesRefusalsAreToldInWords() {
        let twice = Array(#"{"errorCode":4030005,"errorMessage":"x"}"#.utf8)
        XCTAssertEqual(
            SubscriptionExtensionAnswer.singleChain(httpStatus: 403, body: twice),
            .refused(errorCode: 4_030_005, reason: "the subscription was already extended twice in the last 365 days"))
        guard case .refused(4_030_004, let reason)? = SubscriptionExtensionAnswer.singleChain(
            httpStatus: 403, body: Array(#"{"errorCode":4030004}"#.utf8))
        else { return XCTFail("ineligible") }
        XCTAssertTrue(reason.contains("not eligible"))
        XCTAssertEqual(
            SubscriptionExtensionAnswer.singleChain(httpStatus: 400, body: []),
            .refused(errorCode: nil, reason: "Apple refused it (HTTP 400)"))
    }

    func testAMassRequestAndItsStatus() {
        XCTAssertEqual(
            SubscriptionExtensionAnswer.massRequest(
                httpStatus: 200, body: Array(#"{"requestIdentifier":"r1"}"#.utf8), requestIdentifier: "r1"),
            .massAccepted)
        XCTAssertNil(
            SubscriptionExtensionAnswer.massRequest(
                httpStatus: 200, body: Array(#"{"requestIdentifier":"r2"}"#.utf8), requestIdentifier: "r1"))
        XCTAssertEqual(
            SubscriptionExtensionAnswer.massStatus(httpStatus: 200, body: Array(#"{"requestIdentifier":"r1","complete":false}"#.utf8)),
            .massStatus(MassExtensionStatus(complete: false, completeDate: nil, succeededCount: nil, failedCount: nil)))
        let done = Array(#"{"requestIdentifier":"r1","complete":true,"completeDate":5,"succeededCount":30,"failedCount":2}"#.utf8)
        XCTAssertEqual(
            SubscriptionExtensionAnswer.massStatus(httpStatus: 200, body: done),
            .massStatus(MassExtensionStatus(complete: true, completeDate: 5, succeededCount: 30, failedCount: 2)))
    }

    func testGetAllSubscriptionStatusesIsReadChainByChain() throws {
        let body = Array("""
            {"environment":"Sandbox","bundleId":"com.example.game","appAppleId":1,"data":[
             {"subscriptionGroupIdentifier":"21000001","lastTransactions":[
              {"status":1,"originalTransactionId":"11","signedTransactionInfo":"t1","signedRenewalInfo":"r1"},
              {"status":4,"originalTransactionId":"12","signedTransactionInfo":"t2"}]},
             {"subscriptionGroupIdentifier":"21000002","lastTransactions":[
              {"status":9,"originalTransactionId":"13","signedTransactionInfo":"t3","signedRenewalInfo":"r3"}]}]}
            """.utf8)
        let reply = try XCTUnwrap(SubscriptionStatusesReply(body: body))
        XCTAssertEqual(reply.environment, "Sandbox")
        XCTAssertEqual(reply.chains.map(\.originalTransactionID), ["11", "12", "13"])
        XCTAssertEqual(reply.chains.map(\.status), [.active, .gracePeriod, nil])
        XCTAssertEqual(reply.chains[1].signedRenewalInfo, nil)
        XCTAssertNil(SubscriptionStatusesReply(body: Array(#"{"data":[{"lastTransactions":[{"status":1}]}]}"#.utf8)))
        XCTAssertEqual(SubscriptionStatusesReply.path(transactionID: "42"), "/inApps/v1/subscriptions/42")
        XCTAssertNil(SubscriptionStatusesReply.path(transactionID: "4/2"))
    }

    func testAStatusReadIsAChangeDatedWhenAppleSignedTheRenewalInfo() throws {
        let period = SubscriptionPeriod(
            transactionID: "12", originalTransactionID: "11", productID: "vip", purchaseDate: 1_000, expiresDate: 9_000,
            environment: "Production")
        let stored = SubscriptionState(startingWith: SubscriptionPeriod(
            transactionID: "12", originalTransactionID: "11", productID: "vip", purchaseDate: 1_000, expiresDate: 5_000,
            environment: "Production"))
        let info = try RenewalInfo(json: XCTUnwrap(JSONParser.parse(Array(
            #"{"originalTransactionId":"11","autoRenewStatus":0,"expirationIntent":1,"signedDate":7000,"environment":"Production"}"#
                .utf8)).objectValue))
        let expired = SubscriptionChange.statusRead(.expired, period: period, renewalInfo: info, transactionSignedDate: 6_500)
        XCTAssertEqual(expired.kind, .expired(.voluntary))
        XCTAssertEqual(expired.date, 7_000)
        guard case .changed(let after, notifiesGame: true) = expired.outcome(from: stored) else { return XCTFail("changed") }
        XCTAssertEqual(after.status, .expired)
        XCTAssertEqual(after.expiresAt, 9_000)
        // An extension shows as the latest period's later expiry, active.
        let extended = SubscriptionChange.statusRead(.active, period: period, renewalInfo: nil, transactionSignedDate: 6_500)
        XCTAssertEqual(extended.date, 6_500)
        guard case .changed(let moved, _) = extended.outcome(from: stored) else { return XCTFail("changed") }
        XCTAssertEqual(moved.expiresAt, 9_000)
        XCTAssertEqual(moved.status, .active)
        XCTAssertEqual(
            [SubscriptionStatus.gracePeriod, .billingRetry, .revoked].map {
                SubscriptionChange.statusRead($0, period: period, renewalInfo: nil, transactionSignedDate: 1).kind
            },
            [.gracePeriodStarted, .billingRetry, .revoked])
    }
}
