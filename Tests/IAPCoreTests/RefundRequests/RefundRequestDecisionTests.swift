import XCTest

@testable import IAPCore

final class RefundRequestDecisionTests: XCTestCase {
    private let consented = ConsumptionConsent(consentedAtMs: 2000, withdrawnAtMs: nil)

    /// (policy, delivered, answered by the webhook, consumption row) → (consumption sent, preference sent).
    func testEachPolicyByDeliveryAndConsumption() {
        let cases: [(RefundPolicy, Bool, Int?, Int?, Int?, RefundPreference?, UInt)] = [
            (.none, true, nil, 40_000, 40_000, nil, #line),
            (.none, true, nil, nil, nil, nil, #line),
            (.decline, true, nil, 0, 0, .decline, #line),
            (.decline, false, nil, nil, 0, .decline, #line),
            (.grantFull, true, nil, 100_000, 100_000, .grantFull, #line),
            (.grantProrated, true, nil, 40_000, 40_000, .grantProrated, #line),
            (.grantProrated, true, nil, 0, 0, nil, #line),
            (.grantProrated, true, nil, nil, nil, nil, #line),
            (.grantProrated, false, nil, 40_000, 0, nil, #line),
            (.auto, true, nil, 0, 0, .grantFull, #line),
            (.auto, true, nil, 40_000, 40_000, .grantProrated, #line),
            (.auto, true, nil, 100_000, 100_000, .decline, #line),
            (.auto, true, nil, nil, nil, nil, #line),
            (.auto, false, nil, nil, 0, .grantFull, #line),
            (.auto, false, nil, 100_000, 0, .grantFull, #line),
            // The game's webhook answer wins over its consumption row.
            (.auto, true, 100_000, 0, 100_000, .decline, #line),
            (.auto, true, 0, 100_000, 0, .grantFull, #line),
            (.none, true, 25_000, nil, 25_000, nil, #line),
            // Out of range is clamped.
            (.auto, true, 250_000, nil, 100_000, .decline, #line),
            (.auto, true, -5, nil, 0, .grantFull, #line),
        ]
        for (policy, delivered, answered, recorded, consumed, preference, line) in cases {
            let decision = RefundRequestDecision.decide(
                .init(
                    delivered: delivered, answeredConsumedMilli: answered, recordedConsumedMilli: recorded,
                    policy: policy, consent: consented, sampleContentProvided: true))
            XCTAssertEqual(
                decision,
                .send(.init(delivered: delivered, consumedMilli: consumed, preference: preference, sampleContentProvided: true)),
                line: line)
        }
    }

    func testNoConsentInForceSendsNothing() {
        let cases: [(ConsumptionConsent?, Bool, UInt)] = [
            (nil, false, #line),
            (ConsumptionConsent(consentedAtMs: 2000, withdrawnAtMs: nil), true, #line),
            (ConsumptionConsent(consentedAtMs: 2000, withdrawnAtMs: 3000), false, #line),
            (ConsumptionConsent(consentedAtMs: 2000, withdrawnAtMs: 2000), false, #line),
            (ConsumptionConsent(consentedAtMs: 2000, withdrawnAtMs: 1000), true, #line),
        ]
        for (consent, sends, line) in cases {
            let decision = RefundRequestDecision.decide(.init(delivered: true, policy: .decline, consent: consent))
            XCTAssertEqual(decision != .noConsent, sends, line: line)
        }
    }

    func testAnAutoRenewableSubscriptionSendsNoConsumption() {
        for (policy, delivered, preference) in [
            (RefundPolicy.auto, true, RefundPreference?.none), (.auto, false, .grantFull), (.grantProrated, true, nil),
            (.decline, true, .decline),
        ] {
            let decision = RefundRequestDecision.decide(
                .init(
                    delivered: delivered, answeredConsumedMilli: 40_000, recordedConsumedMilli: 40_000, policy: policy,
                    consent: consented, isAutoRenewableSubscription: true))
            XCTAssertEqual(
                decision,
                .send(.init(delivered: delivered, consumedMilli: nil, preference: preference, sampleContentProvided: false)))
        }
    }
}

final class AppStoreConsumptionRequestTests: XCTestCase {
    func testTheBodyApplesEndpointTakes() {
        let full = AppStoreConsumptionRequest(
            .init(delivered: true, consumedMilli: 40_000, preference: .grantProrated, sampleContentProvided: false))
        XCTAssertEqual(
            full.body.serializedString,
            #"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":false,"#
                + #""consumptionPercentage":40000,"refundPreference":"GRANT_PRORATED"}"#)
        XCTAssertEqual(full.refundPreference, "GRANT_PRORATED")
        let bare = AppStoreConsumptionRequest(
            .init(delivered: false, consumedMilli: nil, preference: nil, sampleContentProvided: true))
        XCTAssertEqual(
            bare.body.serializedString,
            #"{"customerConsented":true,"deliveryStatus":"UNDELIVERED_OTHER","sampleContentProvided":true}"#)
        XCTAssertNil(bare.refundPreference)
        XCTAssertEqual(
            [RefundPreference.decline, .grantFull, .grantProrated].map(AppStoreConsumptionRequest.name),
            ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"])
    }
}

final class RefundRequestRetryPolicyTests: XCTestCase {
    private let now: Int64 = 1_800_000_000_000
    private var deadline: Int64 { now + 3_600_000 }

    func testTheBackoffStartsAtFiveSecondsAndDoublesToTenMinutes() {
        let delays = (1...10).map { RefundRequestRetryPolicy.delayMs(afterFailedAttempts: $0) / 1000 }
        XCTAssertEqual(delays, [5, 10, 20, 40, 80, 160, 320, 600, 600, 600])
        XCTAssertEqual(RefundRequestRetryPolicy.delayMs(afterFailedAttempts: 0), 5000)
        XCTAssertEqual(RefundRequestRetryPolicy.delayMs(afterFailedAttempts: 1_000_000), 600_000)
    }

    func testEachAnswer() {
        typealias Policy = RefundRequestRetryPolicy
        let cases: [(Policy.Result, Int, Policy.Outcome, UInt)] = [
            (.answered(httpStatus: 202, errorCode: nil, retryAfterUnixMs: nil), 1, .sent, #line),
            (.answered(httpStatus: 500, errorCode: 5_000_000, retryAfterUnixMs: nil), 1,
             .retry(atMs: now + 5000, error: "HTTP 500 errorCode 5000000"), #line),
            (.answered(httpStatus: 503, errorCode: nil, retryAfterUnixMs: nil), 3, .retry(atMs: now + 20_000, error: "HTTP 503"), #line),
            (.noAnswer("no answer (timeout)"), 2, .retry(atMs: now + 10_000, error: "no answer (timeout)"), #line),
            // 429: after its Retry-After, not the backoff; one in the past (or seconds, not ms) falls back to it.
            (.answered(httpStatus: 429, errorCode: 4_290_000, retryAfterUnixMs: now + 90_000), 1,
             .retry(atMs: now + 90_000, error: "HTTP 429 errorCode 4290000"), #line),
            (.answered(httpStatus: 429, errorCode: nil, retryAfterUnixMs: 30), 1, .retry(atMs: now + 5000, error: "HTTP 429"), #line),
            (.answered(httpStatus: 429, errorCode: nil, retryAfterUnixMs: deadline + 1), 1, .expired(error: "HTTP 429"), #line),
            (.answered(httpStatus: 400, errorCode: 4_000_035, retryAfterUnixMs: nil), 1,
             .failed(error: "HTTP 400 errorCode 4000035"), #line),
            (.answered(httpStatus: 404, errorCode: 4_040_010, retryAfterUnixMs: nil), 1,
             .failed(error: "HTTP 404 errorCode 4040010"), #line),
            (.answered(httpStatus: 401, errorCode: nil, retryAfterUnixMs: nil), 1, .failed(error: "HTTP 401"), #line),
        ]
        for (result, attempt, outcome, line) in cases {
            XCTAssertEqual(Policy.outcome(of: result, attempt: attempt, nowMs: now, deadlineMs: deadline), outcome, line: line)
        }
    }

    func testARetryThatWouldComeAtOrAfterTheDeadlineExpires() {
        let result = RefundRequestRetryPolicy.Result.answered(httpStatus: 500, errorCode: nil, retryAfterUnixMs: nil)
        XCTAssertEqual(
            RefundRequestRetryPolicy.outcome(of: result, attempt: 1, nowMs: now, deadlineMs: now + 5000), .expired(error: "HTTP 500"))
        XCTAssertEqual(
            RefundRequestRetryPolicy.outcome(of: result, attempt: 1, nowMs: now, deadlineMs: now + 5001),
            .retry(atMs: now + 5000, error: "HTTP 500"))
    }

    func testAFailedPutOfARequestAppleDecidedMeanwhileIsNotMadeAgain() {
        typealias Policy = RefundRequestRetryPolicy
        let failures: [Policy.Result] = [
            .answered(httpStatus: 500, errorCode: 5_000_000, retryAfterUnixMs: nil),
            .answered(httpStatus: 429, errorCode: nil, retryAfterUnixMs: now + 1000), .noAnswer("no answer (timeout)"),
        ]
        for result in failures {
            guard case .retry(_, let error) = Policy.outcome(of: result, attempt: 1, nowMs: now, deadlineMs: deadline) else {
                return XCTFail("\(result) is retried while Apple has not decided")
            }
            XCTAssertEqual(
                Policy.outcome(of: result, attempt: 1, nowMs: now, deadlineMs: deadline, appleDecided: true),
                .expired(error: error))
        }
        // What Apple answered is recorded as it came.
        let accepted = Policy.Result.answered(httpStatus: 202, errorCode: nil, retryAfterUnixMs: nil)
        XCTAssertEqual(Policy.outcome(of: accepted, attempt: 1, nowMs: now, deadlineMs: deadline, appleDecided: true), .sent)
        let refused = Policy.Result.answered(httpStatus: 400, errorCode: 4_000_035, retryAfterUnixMs: nil)
        XCTAssertEqual(
            Policy.outcome(of: refused, attempt: 1, nowMs: now, deadlineMs: deadline, appleDecided: true),
            .failed(error: "HTTP 400 errorCode 4000035"))
    }

    func testTheErrorCodeIsReadFromApplesBody() {
        XCTAssertEqual(
            RefundRequestRetryPolicy.Result.answered(
                httpStatus: 400, body: Array(#"{"errorCode":4000035,"errorMessage":"x"}"#.utf8), retryAfterUnixMs: nil),
            .answered(httpStatus: 400, errorCode: 4_000_035, retryAfterUnixMs: nil))
        XCTAssertEqual(
            RefundRequestRetryPolicy.Result.answered(httpStatus: 502, body: Array("<html>".utf8), retryAfterUnixMs: nil),
            .answered(httpStatus: 502, errorCode: nil, retryAfterUnixMs: nil))
    }
}

final class RefundRequestReadinessTests: XCTestCase {
    func testItWaitsForThePendingEventAtMostSixtySeconds() {
        let created: Int64 = 1_800_000_000_000
        let cases: [(Bool, Bool?, Int64, RefundRequestReadiness.Step, UInt)] = [
            (false, true, created, .ready, #line),
            (true, nil, created, .ready, #line),
            (true, false, created, .ready, #line),
            (true, true, created + 10, .wait(untilMs: created + 1010), #line),
            (true, true, created + 59_500, .wait(untilMs: created + 60_000), #line),
            (true, true, created + 60_000, .ready, #line),
        ]
        for (webhook, pending, now, step, line) in cases {
            XCTAssertEqual(
                RefundRequestReadiness.step(webhookConfigured: webhook, eventPending: pending, createdAtMs: created, nowMs: now),
                step, line: line)
        }
    }
}

final class RefundRequestClosingTests: XCTestCase {
    private let deadline: Int64 = 1_800_000_000_000

    func testADecidedOrLateRequestIsClosedUnsent() {
        let cases: [(RefundRequestOutcome?, Int64, RefundRequestClosing?, UInt)] = [
            (nil, deadline - 1, nil, #line),
            (nil, deadline, .pastDeadline, #line),
            (.refunded, deadline - 3_600_000, .decided(.refunded), #line),
            (.declined, deadline - 1, .decided(.declined), #line),
            // Both: the decision is what the operator reads.
            (.declined, deadline + 1, .decided(.declined), #line),
        ]
        for (outcome, now, closing, line) in cases {
            XCTAssertEqual(RefundRequestClosing.of(outcome: outcome, deadlineMs: deadline, nowMs: now), closing, line: line)
        }
    }

    func testItEndsExpiredAndSaysWhyWhenNoPutWasMade() {
        XCTAssertEqual(RefundRequestClosing.decided(.refunded).status, .expired)
        XCTAssertEqual(RefundRequestClosing.pastDeadline.status, .expired)
        XCTAssertEqual(RefundRequestClosing.decided(.refunded).error(attempts: 0), "Apple decided (refunded) before a PUT")
        XCTAssertEqual(RefundRequestClosing.decided(.declined).error(attempts: 0), "Apple decided (declined) before a PUT")
        XCTAssertEqual(RefundRequestClosing.pastDeadline.error(attempts: 0), "deadline passed before a PUT")
        // The last PUT's error stays.
        XCTAssertNil(RefundRequestClosing.decided(.refunded).error(attempts: 2))
        XCTAssertNil(RefundRequestClosing.pastDeadline.error(attempts: 1))
    }
}

final class ConsumptionSettingTests: XCTestCase {
    func testIAPConsumptionIsOnOrOff() throws {
        let base = ["IAP_BUNDLE_IDS": "com.example.game"]
        XCTAssertEqual(try ServiceConfiguration.fromEnvironment(base).consumption, .on)
        XCTAssertEqual(try ServiceConfiguration.fromEnvironment(base.merging(["IAP_CONSUMPTION": "off"]) { $1 }).consumption, .off)
        XCTAssertThrowsError(try ServiceConfiguration.fromEnvironment(base.merging(["IAP_CONSUMPTION": "no"]) { $1 })) {
            XCTAssertEqual(
                "\($0)",
                #"IAP_CONSUMPTION: must be on or off (answer Apple's refund requests with the consumption, or not) (got "no")"#)
        }
    }
}
