import IAPCore
import XCTest

final class ReviewVersionRuleTests: XCTestCase {
    func testVersionsNoClientCouldHaveAreNotPlaceholdersWhenTheyMixDigits() {
        for version in ["1.3.0", "2", "10.0", "1.0.9", "0.9", "9.0.1", "2.0.0b1", "1.90", "100"] {
            XCTAssertFalse(ReviewVersionRule.isPlaceholder(version), version)
            XCTAssertEqual(ReviewVersionRule.effective(version), version)
        }
    }

    func testAllZeroAndAllNineVersionsArePlaceholders() {
        for version in ["0", "0.0", "0.0.0", "00.000", "v0", "9", "9.9.9", "999", "99.99.99", "9.99"] {
            XCTAssertTrue(ReviewVersionRule.isPlaceholder(version), version)
            XCTAssertEqual(ReviewVersionRule.effective(version), "", version)
        }
    }

    func testValuesWithoutADigitArePlaceholders() {
        for version in ["x", "X", "none", "None", "-", "--", "n/a", "null", "tbd", ".", "", "approved"] {
            XCTAssertTrue(ReviewVersionRule.isPlaceholder(version), version)
            XCTAssertEqual(ReviewVersionRule.effective(version), "", version)
        }
    }
}
