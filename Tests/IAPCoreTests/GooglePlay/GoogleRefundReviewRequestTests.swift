import XCTest

@testable import IAPCore

final class GoogleRefundReviewRequestTests: XCTestCase {
    func testTheBodyReviewrefundTakes() {
        let full = GoogleRefundReviewRequest(
            .init(delivered: true, consumedMilli: 40_000, preference: .decline, sampleContentProvided: true),
            pendingRefundToken: "prt-abc")
        XCTAssertEqual(
            full.body.serializedString,
            #"{"pendingRefundToken":"prt-abc","refundPreference":"DECLINE","sampleContentProvided":true,"#
                + #""consumptionPercentageMilliunits":40000}"#)
        XCTAssertEqual(
            full.recordedBody.serializedString,
            #"{"refundPreference":"DECLINE","sampleContentProvided":true,"consumptionPercentageMilliunits":40000}"#)
        XCTAssertEqual(full.refundPreference, "DECLINE")
    }

    func testAnUnknownConsumptionIsLeftOutAndNoPreferenceIsNeutral() {
        let bare = GoogleRefundReviewRequest(
            .init(delivered: true, consumedMilli: nil, preference: nil, sampleContentProvided: false),
            pendingRefundToken: "prt-abc")
        XCTAssertEqual(
            bare.body.serializedString,
            #"{"pendingRefundToken":"prt-abc","refundPreference":"NEUTRAL","sampleContentProvided":false}"#)
        XCTAssertEqual(bare.refundPreference, "NEUTRAL")
    }

    func testApplesPreferencesInGooglesWords() {
        XCTAssertEqual(
            [RefundPreference.decline, .grantFull, .grantProrated, nil].map(GoogleRefundReviewRequest.name),
            ["DECLINE", "APPROVE", "NEUTRAL", "NEUTRAL"])
    }

    func testTheDecisionOfEachPolicyBecomesGooglesPreference() {
        let consent = ConsumptionConsent(consentedAtMs: 1, withdrawnAtMs: nil)
        let cases: [(RefundPolicy, Bool, Int?, String)] = [
            (.none, true, 40_000, "NEUTRAL"), (.decline, true, 40_000, "DECLINE"), (.grantFull, true, nil, "APPROVE"),
            (.grantProrated, true, 40_000, "NEUTRAL"), (.auto, true, 100_000, "DECLINE"), (.auto, false, nil, "APPROVE"),
        ]
        for (policy, delivered, consumed, expected) in cases {
            guard case .send(let answer) = RefundRequestDecision.decide(
                .init(delivered: delivered, recordedConsumedMilli: consumed, policy: policy, consent: consent))
            else { return XCTFail("\(policy): nothing sent") }
            XCTAssertEqual(GoogleRefundReviewRequest(answer, pendingRefundToken: "t").refundPreference, expected, "\(policy)")
        }
    }
}

final class GoogleRefundReviewPlanTests: XCTestCase {
    func testAReviewOfAConfiguredPackageIsARefundRequestAndAnotherPackagesIsIgnored() {
        let review = GoogleDeveloperNotification.Kind.pendingRefundReview(
            pendingRefundToken: "prt-abc", orderID: "GPA.1", refundReason: "REASON", obfuscatedAccountID: "acc")
        let ours = GoogleDeveloperNotification(packageName: "com.example.game", eventTimeMilliseconds: 1, kind: review)
        XCTAssertEqual(
            GoogleNotificationPlan.plan(ours, packages: ["com.example.game"]),
            .refundReview(pendingRefundToken: "prt-abc", orderID: "GPA.1", reason: "REASON", obfuscatedAccountID: "acc"))
        XCTAssertEqual(GoogleNotificationPlan.plan(ours, packages: ["com.example.other"]), .store(.ignored))
        XCTAssertEqual(GoogleNotificationEffect.refundRequested.rawValue, "refund_requested")
    }
}

final class GoogleRefundReviewReplyTests: XCTestCase {
    private let now: Int64 = 1_800_000_000_000
    private var deadline: Int64 { now + 3_600_000 }

    private func outcome(_ verdict: GoogleCallVerdict, attempt: Int = 1, deadline: Int64? = nil, decided: Bool = false)
        -> RefundRequestRetryPolicy.Outcome
    {
        GoogleRefundReviewReply.outcome(
            of: verdict, attempt: attempt, nowMs: now, deadlineMs: deadline ?? self.deadline, decided: decided)
    }

    func testA2xxIsSent() {
        XCTAssertEqual(outcome(.answered(httpStatus: 200, body: Array("{}".utf8))), .sent)
    }

    func testARefusalIsFailedWithGooglesReasonAndNeverMadeAgain() {
        let body = #"{"error":{"code":400,"errors":[{"reason":"refundReviewAlreadyAnswered"}]}}"#
        XCTAssertEqual(
            outcome(.answered(httpStatus: 400, body: Array(body.utf8))),
            .failed(error: "HTTP 400 refundReviewAlreadyAnswered"))
        XCTAssertEqual(outcome(.answered(httpStatus: 403, body: [])), .failed(error: "HTTP 403"))
        XCTAssertEqual(outcome(.notFound), .failed(error: "HTTP 404: Google does not know the order"))
    }

    func testGoogleUnavailableOrRefusingTheAccountIsRetriedWithBackoffUntilTheDeadline() {
        XCTAssertEqual(
            outcome(.unavailable, attempt: 2),
            .retry(atMs: now + 10_000, error: "Google unavailable past the budget"))
        XCTAssertEqual(
            outcome(.unauthorized), .retry(atMs: now + 5000, error: "Google refused the service account"))
        XCTAssertEqual(
            outcome(.unavailable, deadline: now + 1000), .expired(error: "Google unavailable past the budget"))
        XCTAssertEqual(outcome(.unavailable, decided: true), .expired(error: "Google unavailable past the budget"))
    }
}
