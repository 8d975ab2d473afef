import XCTest

@testable import IAPCore

final class RefundRequestGameAnswerTests: XCTestCase {
    func testTheGamesAnswers() {
        let cases: [(body: String, expected: RefundRequestGameAnswer, line: UInt)] = [
            (#"{"consumption_percentage": 40000}"#, .consumed(40000), #line),
            (#"{"consumption_percentage":0}"#, .consumed(0), #line),
            (#"{"consumption_percentage":100000,"ok":true}"#, .consumed(100_000), #line),
            (" \r\n", .silent, #line),
            ("", .silent, #line),
            (#"{"ok":true}"#, .silent, #line),
            (#"{"consumption_percentage":100001}"#, .invalid("consumption_percentage is not an integer from 0 to 100000"), #line),
            (#"{"consumption_percentage":-1}"#, .invalid("consumption_percentage is not an integer from 0 to 100000"), #line),
            (#"{"consumption_percentage":40000.0}"#, .invalid("consumption_percentage is not an integer from 0 to 100000"), #line),
            (#"{"consumption_percentage":4e4}"#, .invalid("consumption_percentage is not an integer from 0 to 100000"), #line),
            (#"{"consumption_percentage":"40000"}"#, .invalid("consumption_percentage is not an integer from 0 to 100000"), #line),
            (#"{"consumption_percentage":null}"#, .invalid("consumption_percentage is not an integer from 0 to 100000"), #line),
            ("[40000]", .invalid("the body is not a JSON object"), #line),
            ("OK", .invalid("the body is not a JSON object"), #line),
            (#"{"consumption_percentage":40000"#, .invalid("the body is not a JSON object"), #line),
        ]
        for row in cases {
            XCTAssertEqual(RefundRequestGameAnswer(body: Array(row.body.utf8)), row.expected, row.body, line: row.line)
        }
    }

    func testConsumedMilliAcceptsOnlyDecimalIntegersInRange() {
        let cases: [(String, Int?)] = [
            ("0", 0), ("40000", 40000), ("100000", 100_000), ("040000", 40000),
            ("100001", nil), ("-1", nil), ("+5", nil), ("", nil), ("4e4", nil), ("1.5", nil), (" 5", nil),
            ("99999999999999999999", nil), ("٣", nil),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(ConsumedMilli.parse(text), expected, text)
        }
    }
}
