import XCTest

@testable import IAPCore

final class JSONParserTests: XCTestCase {
    private func parse(_ text: String, maxDepth: Int = JSONParser.defaultMaxDepth) throws -> JSONValue {
        try JSONParser.parse(Array(text.utf8), maxDepth: maxDepth)
    }

    private func parseError(_ bytes: [UInt8], maxDepth: Int = 32) -> JSONParseError? {
        do {
            _ = try JSONParser.parse(bytes, maxDepth: maxDepth)
            return nil
        } catch {
            return error
        }
    }

    private func parseError(_ text: String, maxDepth: Int = 32) -> JSONParseError? {
        parseError(Array(text.utf8), maxDepth: maxDepth)
    }

    // MARK: Values

    func testLiteralsAndWhitespaceAroundTheValue() throws {
        XCTAssertEqual(try parse("null"), .null)
        XCTAssertEqual(try parse(" \t\r\ntrue\n"), .bool(true))
        XCTAssertEqual(try parse("false"), .bool(false))
        XCTAssertEqual(try parse("  \"x\"  "), .string("x"))
    }

    func testObjectKeepsMemberOrderAndDuplicates() throws {
        let value = try parse(#"{"b": 1, "a": [true, null], "b": "second"}"#)
        let object = try XCTUnwrap(value.objectValue)
        XCTAssertEqual(object.members.map(\.key), ["b", "a", "b"])
        XCTAssertEqual(object["b"], .number("1"))
        XCTAssertEqual(object["a"], .array([.bool(true), .null]))
    }

    func testEmptyContainersAndNesting() throws {
        XCTAssertEqual(try parse("{}"), .object(JSONObject()))
        XCTAssertEqual(try parse("[ ]"), .array([]))
        XCTAssertEqual(
            try parse(#"{"receipt":{"in_app":[{"quantity":"1"},{}]}}"#)["receipt"]?["in_app"]?.arrayValue?.count, 2)
    }

    func testNumbersKeepTheirSourceText() throws {
        for text in ["0", "-0", "6", "6.00", "1406193061000", "-12.5", "1e3", "1E+3", "2.5e-10", "0.0"] {
            XCTAssertEqual(try parse(text), .number(text), text)
        }
        XCTAssertEqual(try parse("[6.00,-1]"), .array([.number("6.00"), .number("-1")]))
    }

    func testNumbersOutsideTheGrammarAreRefused() {
        for text in [
            "01", "-01", "-", "1.", ".5", "1e", "1e+", "+1", "0x10", "NaN", "Infinity", "-Infinity", "1.e5", "--1",
        ] {
            XCTAssertNotNil(parseError(text), text)
        }
        XCTAssertEqual(parseError("01")?.offset, 1)
    }

    // MARK: Strings

    func testAllSimpleEscapes() throws {
        XCTAssertEqual(try parse(#""a\"b\\c\/d\be\ff\ng\rh\ti""#), .string("a\"b\\c/d\u{08}e\u{0C}f\ng\rh\ti"))
    }

    func testUnicodeEscapesIncludingSurrogatePairs() throws {
        XCTAssertEqual(try parse(#""\u0041\u00e9\u4E2D\u0000""#), .string("Aé中\u{0}"))
        XCTAssertEqual(try parse(#""x\ud83d\ude00y""#), .string("x😀y"))
        XCTAssertEqual(try parse(#""\uDBFF\uDFFF""#), .string("\u{10FFFF}"))
    }

    func testLoneSurrogatesAreRefused() {
        for text in [#""\ud83d""#, #""\ud83dx""#, #""\ud83d\u0041""#, #""\ude00""#, #""\ud83d\ud83d""#, #""\ud83d\n""#]
        {
            let error = parseError(text)
            XCTAssertEqual(error?.message.hasPrefix("lone surrogate"), true, text)
        }
        XCTAssertEqual(parseError(#"["\ude00"]"#)?.offset, 2)
    }

    func testBadEscapesAreRefused() {
        for text in [#""\x""#, #""\u12G4""#, #""\u12""#, #""\U0041""#, #""\'""#, "\"\\"] {
            XCTAssertNotNil(parseError(text), text)
        }
        XCTAssertEqual(parseError(#""ab\q""#)?.message, "invalid escape sequence at offset 3")
    }

    func testRawNonASCIIPassesThrough() throws {
        let text = "\"用户 é 😀 \u{7F}\""
        XCTAssertEqual(try parse(text), .string("用户 é 😀 \u{7F}"))
    }

    func testEscapesMixedWithNonASCII() throws {
        XCTAssertEqual(try parse(#""中\n文\u00e9末""#), .string("中\n文é末"))
    }

    func testUnescapedControlCharactersInStringsAreRefused() {
        XCTAssertEqual(
            parseError("\"a\nb\""),
            JSONParseError(message: "unescaped control character in string at offset 2", offset: 2))
        XCTAssertNotNil(parseError("\"a\tb\""))
        XCTAssertNotNil(parseError([0x22, 0x00, 0x22]))
        XCTAssertNotNil(parseError("\"a\\n\u{1F}\""))  // also after an escape
    }

    func testInvalidUTF8IsRefused() {
        let cases: [[UInt8]] = [
            [0x22, 0xFF, 0x22],  // never valid
            [0x22, 0x80, 0x22],  // lone continuation byte
            [0x22, 0xC0, 0x80, 0x22],  // overlong NUL
            [0x22, 0xE0, 0x80, 0x80, 0x22],  // overlong three-byte
            [0x22, 0xED, 0xA0, 0x80, 0x22],  // encoded surrogate
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
            [0x22, 0xE4, 0xB8, 0x22],  // truncated
            [0x22, 0xE4, 0xB8],  // truncated at the end of input
            [0x22, 0x5C, 0x6E, 0xC3, 0x28, 0x22],  // after an escape
        ]
        for bytes in cases {
            let error = parseError(bytes)
            XCTAssertEqual(error?.message.hasPrefix("invalid UTF-8"), true, "\(bytes)")
        }
        XCTAssertEqual(parseError([0x5B, 0x22, 0x61, 0xFF, 0x22, 0x5D])?.offset, 3)
    }

    func testNonASCIIOutsideStringsIsAnUnexpectedCharacter() {
        XCTAssertEqual(parseError([0xEF, 0xBB, 0xBF, 0x31])?.message, "unexpected character at offset 0")  // BOM
        XCTAssertEqual(parseError([0x5B, 0xC3, 0xA9, 0x5D])?.message, "unexpected character at offset 1")
    }

    // MARK: Structure errors

    func testOneValueAndNothingAfterIt() {
        XCTAssertEqual(
            parseError("1 2"), JSONParseError(message: "unexpected data after the JSON value at offset 2", offset: 2))
        XCTAssertNotNil(parseError("{}{}"))
        XCTAssertNotNil(parseError("null x"))
        XCTAssertNotNil(parseError("\"a\" \"b\""))
    }

    func testEmptyInputIsRefused() {
        XCTAssertEqual(parseError(""), JSONParseError(message: "unexpected end of input at offset 0", offset: 0))
        XCTAssertEqual(parseError("  \n")?.message, "unexpected end of input at offset 3")
    }

    func testMalformedContainersAreRefusedWithTheirOffset() {
        XCTAssertEqual(parseError(#"{"a": x}"#)?.message, "unexpected character at offset 6")
        XCTAssertEqual(parseError("[1,]")?.offset, 3)
        XCTAssertEqual(parseError("[1 2]")?.offset, 3)
        XCTAssertEqual(parseError(#"{"a" 1}"#)?.offset, 5)
        XCTAssertEqual(parseError("{1:2}")?.offset, 1)
        XCTAssertEqual(parseError(#"{"a":1,}"#)?.offset, 7)
        XCTAssertEqual(parseError("[1,2")?.message, "unexpected end of input at offset 4")
        XCTAssertEqual(parseError(#"{"a":"#)?.message, "unexpected end of input at offset 5")
        XCTAssertEqual(parseError(#""abc"#)?.message, "unterminated string at offset 4")
        XCTAssertEqual(parseError("tru")?.message, "unexpected end of input at offset 3")
        XCTAssertEqual(parseError("nul1")?.message, "unexpected character at offset 3")
        XCTAssertEqual(parseError("True")?.offset, 0)
        XCTAssertEqual(parseError("]")?.offset, 0)
        XCTAssertEqual(parseError("[,1]")?.offset, 1)
    }

    // MARK: Depth

    func testDepthLimit() throws {
        XCTAssertEqual(try parse("[[[1]]]", maxDepth: 3), .array([.array([.array([.number("1")])])]))
        XCTAssertEqual(parseError("[[[[1]]]]", maxDepth: 3)?.message, "nesting deeper than 3 levels at offset 3")
        XCTAssertNotNil(parseError(#"{"a":{"b":{"c":{}}}}"#, maxDepth: 3))

        let nested32 = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        XCTAssertNoThrow(try parse(nested32))
        let nested33 = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        XCTAssertEqual(parseError(nested33)?.offset, 32)
    }

    func testVeryDeepInputFailsFastWithoutExhaustingTheStack() {
        let hostile = String(repeating: "[", count: 1_000_000)
        XCTAssertEqual(parseError(hostile)?.offset, 32)
    }

    // MARK: Input collections

    func testSlicesAndNonContiguousCollections() throws {
        let bytes = Array("xx[1,\"a\"]yy".utf8)
        XCTAssertEqual(try JSONParser.parse(bytes[2..<9]), .array([.number("1"), .string("a")]))
        XCTAssertEqual(try JSONParser.parse("{\"k\":true}".utf8.lazy.map { $0 }), .object(["k": .bool(true)]))
        XCTAssertEqual(try JSONParser.parse("[1]".utf8), .array([.number("1")]))
    }

    func testErrorOffsetsInSlicesCountFromTheSliceStart() {
        let bytes = Array("xx[1,]".utf8)
        XCTAssertThrowsError(try JSONParser.parse(bytes[2...])) { error in
            XCTAssertEqual((error as? JSONParseError)?.offset, 3)
        }
    }

    func testAppleStyleAnswer() throws {
        let answer = #"""
            {"status":0,"environment":"Sandbox","receipt":{"bundle_id":"com.example.game",
             "in_app":[{"quantity":"1","product_id":"zydj.product.pay_6","transaction_id":"1000000117894869",
             "purchase_date":"2014-07-24 09:11:01 Etc/GMT","purchase_date_ms":"1406193061000"}],
             "app_item_id":0},"is-retryable":false}
            """#
        let value = try parse(answer)
        XCTAssertEqual(value["status"], .number("0"))
        XCTAssertEqual(value["is-retryable"], .bool(false))
        XCTAssertEqual(value["receipt"]?["app_item_id"], .number("0"))
        XCTAssertEqual(
            value["receipt"]?["in_app"]?.arrayValue?.first?["transaction_id"], .string("1000000117894869"))
    }
}
