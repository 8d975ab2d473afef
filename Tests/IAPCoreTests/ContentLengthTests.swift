import XCTest

@testable import IAPCore

final class ContentLengthTests: XCTestCase {
    func testAbsentOrEmptyIsNoBody() throws {
        XCTAssertEqual(try ContentLength.declared(nil, limit: 10), 0)
        XCTAssertEqual(try ContentLength.declared("", limit: 10), 0)
    }

    func testDecimalDigitsUpToTheLimit() throws {
        XCTAssertEqual(try ContentLength.declared("0", limit: 10), 0)
        XCTAssertEqual(try ContentLength.declared("010", limit: 10), 10)
    }

    func testAnythingButDigitsIsAnInvalidField() {
        for text in ["-1", "-9223372036854775808", "+5", " 5", "5 ", "0x10", "5.0", "1e3", "١٢"] {
            XCTAssertThrowsError(try ContentLength.declared(text, limit: 10), text) { error in
                XCTAssertEqual((error as? APIError)?.code, "invalid_field", text)
                XCTAssertEqual((error as? APIError)?.httpStatus, 400, text)
                XCTAssertEqual((error as? APIError)?.message.hasPrefix("CONTENT_LENGTH "), true, text)
            }
        }
    }

    func testPastTheLimitIsBodyTooLargeHoweverLong() {
        for text in ["11", "9223372036854775807", "9223372036854775808", String(repeating: "9", count: 40)] {
            XCTAssertThrowsError(try ContentLength.declared(text, limit: 10), text) { error in
                XCTAssertEqual(error as? APIError, .bodyTooLarge, text)
            }
        }
    }
}
