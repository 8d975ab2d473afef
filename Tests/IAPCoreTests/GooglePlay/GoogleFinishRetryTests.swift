import XCTest

@testable import IAPCore

final class GoogleFinishRetryTests: XCTestCase {
    private func body(_ text: String) -> [UInt8] { Array(text.utf8) }

    func testA2xxAndInvalidPurchaseStateFinishTheRow() {
        XCTAssertEqual(GoogleFinishRetry.decide(.answered(httpStatus: 200, body: body("{}")), failedAttempts: 1, nowMs: 0), .finished)
        let consumedBefore = body(#"{"error": {"code": 400, "errors": [{"reason": "invalidPurchaseState"}]}}"#)
        XCTAssertEqual(GoogleFinishRetry.result(.answered(httpStatus: 400, body: consumedBefore)).metric, "already_finished")
        XCTAssertEqual(GoogleFinishRetry.decide(.answered(httpStatus: 400, body: consumedBefore), failedAttempts: 1, nowMs: 0), .finished)
    }

    func testAnUnknownTokenIsGivenUpAndOtherFailuresRetriedWithGrowingBackoff() {
        XCTAssertEqual(GoogleFinishRetry.decide(.notFound, failedAttempts: 1, nowMs: 0), .givenUp)
        let other400 = GoogleCallVerdict.answered(httpStatus: 400, body: body(#"{"error": {"status": "INVALID_ARGUMENT"}}"#))
        XCTAssertEqual(GoogleFinishRetry.result(other400).error, "HTTP 400 INVALID_ARGUMENT")
        guard case .retry(let first) = GoogleFinishRetry.decide(.unavailable, failedAttempts: 1, nowMs: 1000),
            case .retry(let later) = GoogleFinishRetry.decide(.unauthorized, failedAttempts: 5, nowMs: 1000)
        else { return XCTFail("a failure is retried") }
        XCTAssertGreaterThan(first, 1000)
        XCTAssertGreaterThan(later, first)
    }
}
