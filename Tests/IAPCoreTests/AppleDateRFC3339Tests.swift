import XCTest

@testable import IAPCore

final class AppleDateRFC3339Tests: XCTestCase {
    func testUTCForms() {
        let expected: Int64 = 1_406_193_061_000  // 2014-07-24 09:11:01 UTC
        XCTAssertEqual(AppleDate.milliseconds(fromRFC3339: "2014-07-24T09:11:01Z"), expected)
        XCTAssertEqual(AppleDate.milliseconds(fromRFC3339: "2014-07-24T09:11:01+00:00"), expected)
        XCTAssertEqual(AppleDate.milliseconds(fromRFC3339: "2014-07-24T09:11:01.250Z"), expected, "fractions dropped")
    }

    func testAnythingElseIsNil() {
        for text in ["2014-07-24T09:11:01", "2014-07-24T09:11:01+08:00", "2014-07-24 09:11:01Z", "2014-07-24T09:11:01.x5Z",
                     "", "Z", "2014-02-30T00:00:00Z", "2014-07-24 T09:11:01Z", "2014-07-24T09:11:01 UTCZ",
                     "2014-07-24T09:11:0١Z"] {
            XCTAssertNil(AppleDate.milliseconds(fromRFC3339: text), text)
        }
    }
}
