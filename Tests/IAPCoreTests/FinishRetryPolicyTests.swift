import XCTest

@testable import IAPCore

final class FinishRetryPolicyTests: XCTestCase {
    private let now: Int64 = 1_800_000_000_000

    func testEveryTwoHundredIsFinished() {
        for status in [200, 201, 202, 204, 299] {
            let outcome = FinishCallOutcome.answered(httpStatus: status, errorCode: nil, retryAfterUnixMs: nil)
            XCTAssertEqual(FinishRetryPolicy.decide(outcome, failedAttempts: 3, nowMs: now), .finished, "\(status)")
            XCTAssertNil(outcome.lastError)
            XCTAssertEqual(outcome.metricResult, "finished")
        }
    }

    func testTheBackoffDoublesFromOneSecondToAnHour() {
        let outcome = FinishCallOutcome.noAnswer(.timeout)
        let waits = (1...14).map { attempts -> Int64 in
            guard case .retry(let atMs, _) = FinishRetryPolicy.decide(outcome, failedAttempts: attempts, nowMs: now)
            else { return -1 }
            return (atMs - now) / 1000
        }
        XCTAssertEqual(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3600, 3600])
    }

    func testFailuresOfEveryKindAreRetriedWithBackoffAndNeverGivenUp() {
        let cases: [(FinishCallOutcome, failedAttempts: Int, waitMs: Int64, result: String, error: String)] = [
            (.answered(httpStatus: 500, errorCode: 5_000_000, retryAfterUnixMs: nil), 1, 1000, "http_5xx",
             "HTTP 500, errorCode 5000000"),
            (.answered(httpStatus: 503, errorCode: nil, retryAfterUnixMs: nil), 3, 4000, "http_5xx", "HTTP 503"),
            (.answered(httpStatus: 404, errorCode: 4_040_010, retryAfterUnixMs: nil), 2, 2000, "http_4xx",
             "HTTP 404, errorCode 4040010"),
            (.answered(httpStatus: 401, errorCode: nil, retryAfterUnixMs: nil), 1, 1000, "http_4xx", "HTTP 401"),
            (.answered(httpStatus: 400, errorCode: 4_000_006, retryAfterUnixMs: nil), 200, 3_600_000, "http_4xx",
             "HTTP 400, errorCode 4000006"),
            (.answered(httpStatus: 302, errorCode: nil, retryAfterUnixMs: nil), 1, 1000, "http_other", "HTTP 302"),
            (.noAnswer(.timeout), 1, 1000, "timeout", "no answer in time"),
            (.noAnswer(.connection), 5, 16_000, "connection", "connection failed"),
            (.noAnswer(.tls), 13, 3_600_000, "tls", "TLS failed (certificate not trusted, or handshake refused)"),
        ]
        for (outcome, failedAttempts, waitMs, result, error) in cases {
            XCTAssertEqual(
                FinishRetryPolicy.decide(outcome, failedAttempts: failedAttempts, nowMs: now),
                .retry(atMs: now + waitMs, countsAttempt: true), "\(outcome)")
            XCTAssertEqual(outcome.metricResult, result, "\(outcome)")
            XCTAssertEqual(outcome.lastError, error, "\(outcome)")
        }
    }

    func testA429IsCalledAgainAtItsRetryAfter() {
        let at = now + 7_500
        XCTAssertEqual(
            FinishRetryPolicy.decide(
                .answered(httpStatus: 429, errorCode: 4_290_000, retryAfterUnixMs: at), failedAttempts: 1, nowMs: now),
            .retry(atMs: at, countsAttempt: true))
        XCTAssertEqual(
            FinishCallOutcome.answered(httpStatus: 429, errorCode: nil, retryAfterUnixMs: at).metricResult,
            "rate_limited")
    }

    func testA429RetryAfterInThePastIsNowAndOneFarAheadIsCappedAtAnHour() {
        let past = FinishCallOutcome.answered(httpStatus: 429, errorCode: nil, retryAfterUnixMs: now - 5000)
        XCTAssertEqual(FinishRetryPolicy.decide(past, failedAttempts: 1, nowMs: now), .retry(atMs: now, countsAttempt: true))
        let far = FinishCallOutcome.answered(httpStatus: 429, errorCode: nil, retryAfterUnixMs: now + 86_400_000)
        XCTAssertEqual(
            FinishRetryPolicy.decide(far, failedAttempts: 1, nowMs: now), .retry(atMs: now + 3_600_000, countsAttempt: true))
    }

    func testA429WithoutAUsableRetryAfterBacksOff() {
        for retryAfter in [nil, Int64(30), Int64(1_800_000)] as [Int64?] {  // absent, seconds, not a UNIX time in ms
            let outcome = FinishCallOutcome.answered(httpStatus: 429, errorCode: nil, retryAfterUnixMs: retryAfter)
            XCTAssertEqual(
                FinishRetryPolicy.decide(outcome, failedAttempts: 4, nowMs: now),
                .retry(atMs: now + 8000, countsAttempt: true), "\(String(describing: retryAfter))")
        }
    }

    func testACallNeverSentIsTriedSoonWithoutCountingAnAttempt() {
        XCTAssertEqual(
            FinishRetryPolicy.decide(.notSent, failedAttempts: 9, nowMs: now), .retry(atMs: now + 1000, countsAttempt: false))
        XCTAssertEqual(FinishCallOutcome.notSent.metricResult, "not_sent")
    }

    func testAnIdThatIsNotDigitsIsGivenUpAtOnceWithAClearError() {
        let outcome = FinishCallOutcome.invalidTransactionID
        XCTAssertEqual(FinishRetryPolicy.decide(outcome, failedAttempts: 1, nowMs: now), .givenUp)
        XCTAssertEqual(outcome.metricResult, "invalid_id")
        XCTAssertEqual(outcome.lastError, "never sent: the transaction id is not decimal digits")
        XCTAssertEqual(
            AppleDate.sqlDateTime(ms: FinishRetryPolicy.givenUpAtMs), "9999-12-31 23:59:59.000", "the last DATETIME")
    }

    func testOnlyDigitsMakeATransactionIDThatGoesIntoAURL() {
        for id in ["2000000123456789", "0", String(repeating: "9", count: 64)] {
            XCTAssertTrue(AppleTransactionID.isValid(id), id)
        }
        for id in ["", "12a4", "1/../2", "1?x=2", "1%2F", "12 3", "١٢٣", "-1", "+1", String(repeating: "9", count: 65)] {
            XCTAssertFalse(AppleTransactionID.isValid(id), id)
        }
    }
}

final class FinishCallOutcomeTests: XCTestCase {
    func testApplesErrorCodeIsReadFromTheBody() {
        let cases: [(String, Int?)] = [
            (#"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#, 4_040_010),
            ("", nil), ("not json", nil), (#"{"errorMessage":"no code"}"#, nil),
        ]
        for (body, code) in cases {
            XCTAssertEqual(
                FinishCallOutcome.answered(httpStatus: 404, body: Array(body.utf8), retryAfterUnixMs: nil),
                .answered(httpStatus: 404, errorCode: code, retryAfterUnixMs: nil), body)
        }
    }
}
