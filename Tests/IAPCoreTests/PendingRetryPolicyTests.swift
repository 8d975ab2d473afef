import IAPCore
import XCTest

final class PendingRetryPolicyTests: XCTestCase {
    private let policy = PendingRetryPolicy(maxAttempts: 4, backoffSeconds: 300)

    func testACompletedVerificationIsSettledWhateverTheCount() {
        XCTAssertEqual(policy.next(attempts: 9, completed: true, appleStatus: 0, isRetryable: false), .settled)
    }

    func testPassingFaultsAreRetriedWithADoublingBackoff() {
        XCTAssertEqual(policy.next(attempts: 1, completed: false, appleStatus: 21005, isRetryable: false),
                       .retry(afterSeconds: 300))
        XCTAssertEqual(policy.next(attempts: 2, completed: false, appleStatus: nil, isRetryable: false),
                       .retry(afterSeconds: 600))
        XCTAssertEqual(policy.next(attempts: 3, completed: false, appleStatus: 21009, isRetryable: false),
                       .retry(afterSeconds: 1200))
    }

    func testTheBackoffStopsGrowingAtADay() {
        XCTAssertEqual(policy.backoff(afterAttempt: 9), 76_800)
        XCTAssertEqual(policy.backoff(afterAttempt: 10), PendingRetryPolicy.maxBackoffSeconds)
        XCTAssertEqual(policy.backoff(afterAttempt: 1_000_000), PendingRetryPolicy.maxBackoffSeconds)
        XCTAssertEqual(PendingRetryPolicy(maxAttempts: 3, backoffSeconds: 0).backoff(afterAttempt: 5), 0)
    }

    func testTheLastAttemptGivesUpAndSaysWhatAppleLastSaid() {
        guard case .giveUp(let reason) = policy.next(attempts: 4, completed: false, appleStatus: 21005, isRetryable: false)
        else { return XCTFail("not given up") }
        XCTAssertTrue(reason.contains("--max-attempts 4") && reason.contains("21005"), reason)
        guard case .giveUp(let silent) = policy.next(attempts: 5, completed: false, appleStatus: nil, isRetryable: false)
        else { return XCTFail("not given up") }
        XCTAssertTrue(silent.contains("no answer"), silent)
    }

    func testStatusesNotToAskAgainAboutGiveUpAtOnce() {
        for (status, isRetryable) in [(21000, false), (21100, false), (21199, false)] {
            guard case .giveUp(let reason) = policy.next(
                attempts: 1, completed: false, appleStatus: status, isRetryable: isRetryable)
            else { return XCTFail("\(status) not given up") }
            XCTAssertTrue(reason.contains("\(status)"), reason)
        }
    }

    func testRetryableInternalErrorsAndTheSharedSecretAreRetried() {
        XCTAssertEqual(policy.next(attempts: 1, completed: false, appleStatus: 21150, isRetryable: true),
                       .retry(afterSeconds: 300))
        XCTAssertEqual(policy.next(attempts: 1, completed: false, appleStatus: 21004, isRetryable: false),
                       .retry(afterSeconds: 300))
    }
}
