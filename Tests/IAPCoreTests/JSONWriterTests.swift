import XCTest

@testable import IAPCore

final class JSONWriterTests: XCTestCase {
    func testCompactOutputInStoredOrder() {
        let value: JSONValue = .object([
            "status": .string("delivered"),
            "code": .int(2),
            "finish_transaction": .bool(true),
            "apple_status": .null,
            "transactions": .array([.object(["quantity": .int(1)]), .array([])]),
            "app": .object([:]),
        ])
        XCTAssertEqual(
            value.serializedString,
            #"{"status":"delivered","code":2,"finish_transaction":true,"apple_status":null,"#
                + #""transactions":[{"quantity":1},[]],"app":{}}"#)
    }

    func testNumbersAreWrittenAsStored() {
        XCTAssertEqual(JSONValue.number("6.00").serializedString, "6.00")
        XCTAssertEqual(
            JSONValue.array([.number("1406193061000"), .number("-0.5e+10")]).serializedString,
            "[1406193061000,-0.5e+10]")
    }

    func testEscapes() {
        let value = JSONValue.string("q\"b\\n\nr\rt\tb\u{08}f\u{0C}x\u{01}y\u{1F}z\u{0}")
        XCTAssertEqual(value.serializedString, #""q\"b\\n\nr\rt\tb\bf\fx\u0001y\u001fz\u0000""#)
    }

    func testSlashAndDELAreNotEscaped() {
        XCTAssertEqual(JSONValue.string("a/b\u{7F}").serializedString, "\"a/b\u{7F}\"")
    }

    func testNonASCIIIsWrittenAsUTF8() {
        let bytes = JSONValue.string("é中😀").serialized()
        XCTAssertEqual(bytes, [0x22, 0xC3, 0xA9, 0xE4, 0xB8, 0xAD, 0xF0, 0x9F, 0x98, 0x80, 0x22])
    }

    func testKeysAreEscapedToo() {
        let value: JSONValue = .object(["a\"b\n": .string("用户")])
        XCTAssertEqual(value.serializedString, "{\"a\\\"b\\n\":\"用户\"}")
    }

    func testRoundTripThroughTheParser() throws {
        let value: JSONValue = .object([
            "user_id": .string("'; DROP TABLE orders; -- 用户 😀"),
            "control": .string("\u{0}\u{1}\u{1F}\n\t\"\\/"),
            "price": .number("6.00"),
            "nested": .array([.null, .bool(false), .object(["deep": .array([.number("-1e-3")])])]),
            "dup": .int(1),
            "dup": .int(2),
        ])
        XCTAssertEqual(try JSONParser.parse(value.serialized()), value)
    }

    func testCompactTextIsReproducedExactly() throws {
        let text = #"{"a":[1,2.50,-3e+2,"x\"y\\z\n","é/中"],"b":{"c":null,"d":true}}"#
        XCTAssertEqual(try JSONParser.parse(Array(text.utf8)).serializedString, text)
    }

    func testBuilders() {
        XCTAssertEqual(JSONValue.int(-42), .number("-42"))
        XCTAssertEqual(JSONValue.int(UInt64.max), .number("18446744073709551615"))
        XCTAssertEqual(JSONValue.int(Int8(7)), .number("7"))
        XCTAssertEqual(JSONValue.optionalString(nil), .null)
        XCTAssertEqual(JSONValue.optionalString("x"), .string("x"))
        let object: JSONObject = ["z": .null, "a": .int(1)]
        XCTAssertEqual(object.members.map(\.key), ["z", "a"])
    }

    func testNonNativeStringIsWrittenCompletely() {
        // Runs between escapes are copied in pieces: check none is lost.
        let long = String(repeating: "ab\"", count: 10_000)
        let bytes = JSONValue.string(long).serialized()
        XCTAssertEqual(bytes.count, 2 + 10_000 * 4)
        let sub = String("xx\u{1}yy".dropFirst())
        XCTAssertEqual(JSONValue.string(sub).serializedString, #""x\u0001yy""#)
    }
}
