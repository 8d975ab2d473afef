import IAPCore
import XCTest

final class AppleStatusTests: XCTestCase {
    func testEveryRowOfTheStatusTable() {
        let table: [(Int, AppleStatusAction)] = [
            (0, .accept),
            (21000, .unavailable),
            (21002, .retryThenInvalid),
            (21003, .invalid),
            (21004, .unavailable),
            (21005, .retryThenUnavailable),
            (21006, .accept),
            (21007, .sendTo(.sandbox)),
            (21008, .sendTo(.production)),
            (21009, .retryThenUnavailable),
            (21010, .invalid),
            (21100, .unavailable),
            (21199, .unavailable),
            (21001, .unavailable),
            (21200, .unavailable),
            (-1, .unavailable),
        ]
        for (status, action) in table {
            XCTAssertEqual(AppleStatus(status).action(isRetryable: false), action, "\(status)")
        }
    }

    func testTheRetryableFlagOnlyMattersForInternalErrors() {
        XCTAssertEqual(AppleStatus(21100).action(isRetryable: true), .retryThenUnavailable)
        XCTAssertEqual(AppleStatus(21150).action(isRetryable: true), .retryThenUnavailable)
        XCTAssertEqual(AppleStatus(21199).action(isRetryable: true), .retryThenUnavailable)
        XCTAssertEqual(AppleStatus(21099).action(isRetryable: true), .unavailable)
        XCTAssertEqual(AppleStatus(21200).action(isRetryable: true), .unavailable)
        XCTAssertEqual(AppleStatus(21003).action(isRetryable: true), .invalid)
        XCTAssertEqual(AppleStatus(21004).action(isRetryable: true), .unavailable)
        XCTAssertEqual(AppleStatus(0).action(isRetryable: true), .accept)
    }

    func testDescribesStatusesForLogs() {
        XCTAssertEqual(AppleStatus.sandboxReceiptSentToProduction.description, "21007 (sandbox receipt sent to production)")
        XCTAssertEqual(AppleStatus(21123).meaning, "internal error")
        XCTAssertEqual(AppleStatus(42).meaning, "undocumented status")
        XCTAssertTrue(AppleStatus(21100).isInternalError)
        XCTAssertFalse(AppleStatus(21010).isInternalError)
    }
}
