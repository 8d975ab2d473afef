import XCTest

@testable import IAPCore

/// Base64url as JWS writes its parts (RFC 7515 appendix C): no padding, `-` and `_`.
final class Base64Tests: XCTestCase {
    private func url(_ text: String) -> [UInt8]? {
        Base64.decodeURL(ArraySlice(text.utf8))
    }

    func testBase64URLDecodesEveryLengthWithoutPadding() {
        XCTAssertEqual(url(""), [])
        XCTAssertEqual(url("Zg"), Array("f".utf8))
        XCTAssertEqual(url("Zm8"), Array("fo".utf8))
        XCTAssertEqual(url("Zm9v"), Array("foo".utf8))
        XCTAssertEqual(url("-_8"), [0xFB, 0xFF])
    }

    func testBase64URLRefusesTheStandardAlphabetPaddingAndImpossibleLengths() {
        XCTAssertNil(url("+/8"))
        XCTAssertNil(url("Zg=="))
        XCTAssertNil(url("Zm9vY"))
        XCTAssertNil(url("Zm 9"))
        XCTAssertNil(url("Zm.9"))
    }

    func testStandardDecodingOfAString() {
        XCTAssertEqual(Base64.decode("+/8="), [0xFB, 0xFF])
        XCTAssertNil(Base64.decode("-_8="))
    }
}
