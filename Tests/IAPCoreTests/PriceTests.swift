import XCTest

@testable import IAPCore

final class PriceTests: XCTestCase {
    func testAcceptedText() {
        XCTAssertEqual(Price("6")?.cents, 600)
        XCTAssertEqual(Price("6.5")?.cents, 650)
        XCTAssertEqual(Price("6.00")?.cents, 600)
        XCTAssertEqual(Price("6.05")?.cents, 605)
        XCTAssertEqual(Price("0")?.cents, 0)
        XCTAssertEqual(Price("0.00")?.cents, 0)
        XCTAssertEqual(Price("0.99")?.cents, 99)
        XCTAssertEqual(Price("99999999.99")?.cents, 99_999_999_99)
        XCTAssertEqual(Price("648.00")?.cents, 64_800)
    }

    func testRefusedText() {
        for text in [
            "", " 6", "6 ", "-6", "+6", "6.", ".5", "6.001", "6.500", "06", "00", "1e2", "6,00", "abc",
            "100000000", "100000000.00", "6..0", "6.0.0", "six", "６",
        ] {
            XCTAssertNil(Price(text), text)
        }
    }

    func testEqualAmountsWrittenDifferentlyCompareEqual() {
        XCTAssertEqual(Price("6"), Price("6.00"))
        XCTAssertEqual(Price("6.5"), Price("6.50"))
        XCTAssertNotEqual(Price("6.5"), Price("6.05"))
    }

    func testJSONStringsAndNumbers() throws {
        XCTAssertEqual(Price(json: .string("6.00"))?.cents, 600)
        XCTAssertEqual(Price(json: .number("6"))?.cents, 600)
        XCTAssertEqual(Price(json: .number("6.00"))?.cents, 600)
        XCTAssertEqual(Price(json: try JSONParser.parse(Array("6.5".utf8)))?.cents, 650)
        XCTAssertNil(Price(json: .number("6e0")))
        XCTAssertNil(Price(json: .number("-1")))
        XCTAssertNil(Price(json: .number("6.001")))
        XCTAssertNil(Price(json: .bool(true)))
        XCTAssertNil(Price(json: .null))
        XCTAssertNil(Price(json: .array([.number("6")])))
    }

    func testDescriptionHasTwoFractionDigits() {
        XCTAssertEqual(Price(cents: 600).description, "6.00")
        XCTAssertEqual(Price(cents: 605).description, "6.05")
        XCTAssertEqual(Price(cents: 650).description, "6.50")
        XCTAssertEqual(Price(cents: 7).description, "0.07")
        XCTAssertEqual(Price(cents: 0).description, "0.00")
        XCTAssertEqual(Price(cents: Price.maximumCents).description, "99999999.99")
        XCTAssertEqual(Price("6.5")?.description, "6.50")
    }

    func testDatabaseTextRoundTrips() {
        for text in ["6.00", "0.00", "12.34", "99999999.99", "100.10"] {
            XCTAssertEqual(Price(text)?.description, text)
        }
    }
}
