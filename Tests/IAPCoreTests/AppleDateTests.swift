import IAPCore
import XCTest

final class AppleDateTests: XCTestCase {
    func testWritesISO8601ToTheSecond() {
        XCTAssertEqual(AppleDate.iso8601(ms: 1_406_193_061_000), "2014-07-24T09:11:01Z")
        XCTAssertEqual(AppleDate.iso8601(ms: 1_406_193_077_021), "2014-07-24T09:11:17Z")
        XCTAssertEqual(AppleDate.iso8601(ms: 0), "1970-01-01T00:00:00Z")
        XCTAssertEqual(AppleDate.iso8601(ms: 1_456_704_000_000), "2016-02-29T00:00:00Z")
        XCTAssertEqual(AppleDate.iso8601(ms: 951_868_800_000), "2000-03-01T00:00:00Z")
        XCTAssertEqual(AppleDate.iso8601(ms: 4_102_444_799_999), "2099-12-31T23:59:59Z")
        XCTAssertEqual(AppleDate.iso8601(ms: -1), "1969-12-31T23:59:59Z")
    }

    func testWritesSQLDateTimeWithMilliseconds() {
        XCTAssertEqual(AppleDate.sqlDateTime(ms: 1_406_193_061_000), "2014-07-24 09:11:01.000")
        XCTAssertEqual(AppleDate.sqlDateTime(ms: 1_406_193_077_021), "2014-07-24 09:11:17.021")
        XCTAssertEqual(AppleDate.sqlDateTime(ms: 1_375_340_400_000), "2013-08-01 07:00:00.000")
        XCTAssertEqual(AppleDate.sqlDateTime(ms: -1), "1969-12-31 23:59:59.999")
        // Four-digit years are written digit by digit; others as long as they are.
        XCTAssertEqual(AppleDate.sqlDateTime(ms: 253_402_300_799_999), "9999-12-31 23:59:59.999")
        XCTAssertEqual(AppleDate.sqlDateTime(ms: 253_402_300_800_000), "10000-01-01 00:00:00.000")
        XCTAssertEqual(AppleDate.iso8601(ms: 253_402_300_800_000), "10000-01-01T00:00:00Z")
        XCTAssertEqual(AppleDate.iso8601(ms: -62_167_219_200_000), "0000-01-01T00:00:00Z")
    }

    func testReadsApplesDates() {
        XCTAssertEqual(AppleDate.milliseconds(fromAppleDate: "2014-07-24 09:11:01 Etc/GMT"), 1_406_193_061_000)
        XCTAssertEqual(AppleDate.milliseconds(fromAppleDate: "2013-08-01 07:00:00 Etc/GMT"), 1_375_340_400_000)
        XCTAssertEqual(AppleDate.milliseconds(fromAppleDate: "2016-02-29 00:00:00 UTC"), 1_456_704_000_000)
        XCTAssertEqual(AppleDate.milliseconds(fromAppleDate: "1970-01-01 00:00:00"), 0)
    }

    func testRefusesWhatItCannotReadExactly() {
        let unreadable = [
            "2014-07-24 02:11:01 America/Los_Angeles", "2014-07-24", "2014-07-24T09:11:01Z",
            "2015-02-29 00:00:00 Etc/GMT", "2014-13-01 00:00:00 Etc/GMT", "2014-07-24 24:00:00 Etc/GMT",
            "2014-7-24 09:11:01 Etc/GMT", "abcd-07-24 09:11:01 Etc/GMT", "",
        ]
        for text in unreadable {
            XCTAssertNil(AppleDate.milliseconds(fromAppleDate: text), text)
        }
    }

    func testReadsBackWhatItWritesOverTwoCenturies() {
        // Every ~37 days and a few hours from 1970 to 2170: leap years and century rules included.
        var ms: Int64 = 0
        while ms < 6_311_390_400_000 {
            let iso = AppleDate.iso8601(ms: ms)
            let appleText = String(iso.dropLast().map { $0 == "T" ? " " : $0 }) + " Etc/GMT"
            XCTAssertEqual(AppleDate.milliseconds(fromAppleDate: appleText), ms - ms % 1000, appleText)
            XCTAssertTrue(AppleDate.sqlDateTime(ms: ms).hasPrefix(String(appleText.prefix(19))))
            ms += 3_212_345_678
        }
    }
}
