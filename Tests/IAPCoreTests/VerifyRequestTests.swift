import Crypto
import Foundation
import XCTest

@testable import IAPCore

final class VerifyRequestTests: XCTestCase {
    /// Bytes whose base64 contains `+` and `/` and needs padding.
    private let receiptBytes: [UInt8] = Array(0...255) + [0xFB, 0xFF]
    private var receiptBase64: String { Data(receiptBytes).base64EncodedString() }
    private let orderID = "0b6f1b2e-3c4d-4e5f-8a9b-0c1d2e3f4a5b"

    private func body(_ members: [(String, JSONValue)]) -> [UInt8] {
        JSONValue.object(JSONObject(members.map { (key: $0.0, value: $0.1) })).serialized()
    }

    private func apiError(_ body: [UInt8]) -> APIError? {
        do {
            _ = try VerifyRequest.parse(body: body)
            return nil
        } catch {
            return error
        }
    }

    private func apiError(_ json: String) -> APIError? { apiError(Array(json.utf8)) }

    /// The receipt's bytes, decoded again from its normalised base64 (Foundation's decoder, not ours),
    /// after checking that its SHA-256 is theirs: `ReceiptData` keeps the text and the hash only.
    private func decoded(_ receipt: ReceiptData, file: StaticString = #filePath, line: UInt = #line) -> [UInt8] {
        let bytes = Array(Data(base64Encoded: receipt.base64) ?? Data())
        XCTAssertEqual(receipt.sha256Hex, SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined(),
                       "the SHA-256 is not that of the decoded bytes", file: file, line: line)
        return bytes
    }

    // MARK: Whole requests

    func testFullRequest() throws {
        let request = try VerifyRequest.parse(
            body: body([
                ("receipt_data", .string(receiptBase64)), ("order_id", .string(orderID)),
                ("transaction_id", .string("1000000117894869")), ("user_id", .string("u-1001")),
                ("app_version", .string("1.3.0")),
            ]))
        XCTAssertEqual(decoded(request.receipt), receiptBytes)
        XCTAssertEqual(request.receipt.base64, receiptBase64)
        XCTAssertEqual(request.orderID, orderID)
        XCTAssertEqual(request.transactionID, "1000000117894869")
        XCTAssertEqual(request.userID, "u-1001")
        XCTAssertEqual(request.appVersion, "1.3.0")
    }

    func testMinimalRequestWithUserOnly() throws {
        let request = try VerifyRequest.parse(
            body: body([("receipt_data", .string("TWFu")), ("user_id", .string("u"))]))
        XCTAssertEqual(decoded(request.receipt), Array("Man".utf8))
        XCTAssertNil(request.orderID)
        XCTAssertNil(request.transactionID)
        XCTAssertNil(request.appVersion)
    }

    func testOrderIDAloneIsEnoughWithoutUser() throws {
        let request = try VerifyRequest.parse(
            body: body([("receipt_data", .string("TWFu")), ("order_id", .string(orderID))]))
        XCTAssertNil(request.userID)
        XCTAssertEqual(request.orderID, orderID)
    }

    func testUserIDIsRequiredWhenOrderIDIsAbsent() {
        let expected = APIError(
            httpStatus: 400, code: "missing_field", message: "user_id is required when order_id is absent")
        XCTAssertEqual(apiError(body([("receipt_data", .string("TWFu"))])), expected)
        XCTAssertEqual(
            apiError(body([("receipt_data", .string("TWFu")), ("order_id", .null), ("user_id", .null)])), expected)
    }

    func testUserIDIsValidatedLikeOrders() {
        let error = apiError(body([("receipt_data", .string("TWFu")), ("user_id", .string("a\u{0}b"))]))
        XCTAssertEqual(error?.code, "invalid_field")
        XCTAssertEqual(error?.message.hasPrefix("user_id "), true)
        let sql = "'; DROP TABLE transactions; --"
        XCTAssertEqual(
            try VerifyRequest.parse(body: body([("receipt_data", .string("TWFu")), ("user_id", .string(sql))])).userID,
            sql)
    }

    func testUnknownKeysAreIgnoredAndNotAnObjectIsInvalidJSON() throws {
        XCTAssertNoThrow(
            try VerifyRequest.parse(
                body: body([("receipt_data", .string("TWFu")), ("user_id", .string("u")), ("sandbox", .bool(true))])))
        XCTAssertEqual(apiError("receipt-data=TWFu")?.code, "invalid_json")
        XCTAssertEqual(apiError(#"["TWFu"]"#)?.code, "invalid_json")
    }

    // MARK: receipt_data

    func testAppleKeyReceiptDashData() throws {
        let request = try VerifyRequest.parse(
            body: body([("receipt-data", .string("TWE=")), ("user_id", .string("u"))]))
        XCTAssertEqual(decoded(request.receipt), Array("Ma".utf8))
    }

    func testUnderscoreKeyWinsOverDashKey() throws {
        let request = try VerifyRequest.parse(
            body: body([
                ("receipt-data", .string("TWE=")), ("receipt_data", .string("TQ==")), ("user_id", .string("u")),
            ]))
        XCTAssertEqual(decoded(request.receipt), Array("M".utf8))
        let nullUnderscore = try VerifyRequest.parse(
            body: body([("receipt_data", .null), ("receipt-data", .string("TWE=")), ("user_id", .string("u"))]))
        XCTAssertEqual(decoded(nullUnderscore.receipt), Array("Ma".utf8))
    }

    func testMissingReceiptIsMissingField() {
        XCTAssertEqual(
            apiError(body([("user_id", .string("u"))])),
            APIError(httpStatus: 400, code: "missing_field", message: "receipt_data is required"))
        XCTAssertEqual(apiError(body([("receipt_data", .null), ("user_id", .string("u"))]))?.code, "missing_field")
    }

    func testReceiptOfWrongTypeIsInvalidField() {
        let error = apiError(body([("receipt_data", .number("12")), ("user_id", .string("u"))]))
        XCTAssertEqual(error?.code, "invalid_field")
        XCTAssertEqual(error?.message.hasPrefix("receipt_data "), true)
        XCTAssertEqual(
            apiError(body([("receipt-data", .array([])), ("user_id", .string("u"))]))?.message.hasPrefix(
                "receipt-data "), true)
    }

    func testLineWrappedBase64Every76Characters() throws {
        let long = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let encoded = Data(long).base64EncodedString()
        let wrapped = stride(from: 0, to: encoded.count, by: 76).map { start -> String in
            let from = encoded.index(encoded.startIndex, offsetBy: start)
            let to = encoded.index(from, offsetBy: min(76, encoded.count - start))
            return String(encoded[from..<to])
        }
        XCTAssertGreaterThan(wrapped.count, 10)
        for separator in ["\n", "\r\n"] {
            let request = try VerifyRequest.parse(
                body: body([
                    ("receipt_data", .string(wrapped.joined(separator: separator) + separator)),
                    ("user_id", .string("u")),
                ]))
            XCTAssertEqual(decoded(request.receipt), long)
            XCTAssertEqual(request.receipt.base64, encoded, "line breaks are gone from what is forwarded")
        }
    }

    func testSpacesAreReadAsPlus() throws {
        XCTAssertTrue(receiptBase64.contains("+"))
        let formMangled = receiptBase64.replacingOccurrences(of: "+", with: " ")
        let request = try VerifyRequest.parse(
            body: body([("receipt_data", .string(formMangled)), ("user_id", .string("u"))]))
        XCTAssertEqual(decoded(request.receipt), receiptBytes)
        XCTAssertEqual(request.receipt.base64, receiptBase64)
    }

    func testInvalidBase64IsInvalidReceiptData() {
        for text in [
            "", "\n\r\t", "TWF", "TWFu!", "TW-u", "TW_u", "T=Fu", "TQ=A", "====", "TQ===", "A===", "TWFuTQ",
            "TWFu\u{0}", "TWF\u{0}", "Ṫwfu", "éTW",
        ] {
            XCTAssertEqual(
                apiError(body([("receipt_data", .string(text)), ("user_id", .string("u"))])), .invalidReceiptData,
                text.debugDescription)
        }
        XCTAssertEqual(APIError.invalidReceiptData.httpStatus, 400)
    }

    func testReceiptDigestIsOfTheDecodedBytes() throws {
        let receipt = try ReceiptData.normalise(Data("abc".utf8).base64EncodedString())
        XCTAssertEqual(receipt.sha256Hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func testDecoderAgreesWithFoundationForAllTailLengths() throws {
        for length in 1...70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let receipt = try ReceiptData.normalise(Data(bytes).base64EncodedString())
            XCTAssertEqual(decoded(receipt), bytes, "length \(length)")
        }
    }

    // MARK: order_id

    func testOrderIDIsStoredLowercase() throws {
        let request = try VerifyRequest.parse(
            body: body([("receipt_data", .string("TWFu")), ("order_id", .string(orderID.uppercased()))]))
        XCTAssertEqual(request.orderID, orderID)
    }

    func testBadOrderIDIsInvalidField() {
        for value: JSONValue in [
            .string(""), .string("0b6f1b2e3c4d4e5f8a9b0c1d2e3f4a5b"), .string(String(orderID.dropLast())),
            .string(orderID + "0"), .string("0b6f1b2e-3c4d-4e5f-8a9b-0c1d2e3f4a5g"),
            .string("{0b6f1b2e-3c4d-4e5f-8a9b-0c1d2e3f4a5b}"), .string("0b6f1b2e-3c4d-4e5f-8a9b0-c1d2e3f4a5b"),
            .number("12"),
        ] {
            let error = apiError(
                body([("receipt_data", .string("TWFu")), ("order_id", value), ("user_id", .string("u"))]))
            XCTAssertEqual(error?.code, "invalid_field", "\(value)")
            XCTAssertEqual(error?.message.hasPrefix("order_id "), true, "\(value)")
        }
    }

    // MARK: transaction_id

    func testTransactionIDAsStringOrInteger() throws {
        for value: JSONValue in [.string("1000000117894869"), .number("1000000117894869")] {
            let request = try VerifyRequest.parse(
                body: body([("receipt_data", .string("TWFu")), ("transaction_id", value), ("user_id", .string("u"))]))
            XCTAssertEqual(request.transactionID, "1000000117894869")
        }
        let sixtyFour = String(repeating: "9", count: 64)
        XCTAssertEqual(
            try VerifyRequest.parse(
                body: body([
                    ("receipt_data", .string("TWFu")), ("transaction_id", .string(sixtyFour)),
                    ("user_id", .string("u")),
                ])
            ).transactionID, sixtyFour)
    }

    func testBadTransactionIDIsInvalidField() {
        for value: JSONValue in [
            .string(""), .string("10000001a"), .string(" 1000"), .string("-1"), .string("１２"),
            .string(String(repeating: "1", count: 65)), .number("1.5"), .number("-1"), .number("1e5"), .bool(true),
            .array([.number("1")]),
        ] {
            let error = apiError(
                body([("receipt_data", .string("TWFu")), ("transaction_id", value), ("user_id", .string("u"))]))
            XCTAssertEqual(error?.code, "invalid_field", "\(value)")
            XCTAssertEqual(error?.message.hasPrefix("transaction_id "), true, "\(value)")
        }
    }

    // MARK: app_version

    func testAppVersion() throws {
        for version in ["1", "1.3.0", "2.0 (beta)", String(repeating: "9", count: 32)] {
            XCTAssertEqual(
                try VerifyRequest.parse(
                    body: body([
                        ("receipt_data", .string("TWFu")), ("user_id", .string("u")), ("app_version", .string(version)),
                    ])
                ).appVersion, version)
        }
        for value: JSONValue in [
            .string(""), .string(String(repeating: "9", count: 33)), .string("1.0\n"), .string("版本"), .number("1"),
        ] {
            let error = apiError(
                body([("receipt_data", .string("TWFu")), ("user_id", .string("u")), ("app_version", value)]))
            XCTAssertEqual(error?.code, "invalid_field", "\(value)")
            XCTAssertEqual(error?.message.hasPrefix("app_version "), true, "\(value)")
        }
    }

    func testReceiptOverTheLimitIsAnInvalidField() {
        let tooLong = String(repeating: "AAAA", count: VerifyRequest.maxReceiptCharacters / 4 + 1)
        let error = apiError(body([("receipt_data", .string(tooLong)), ("user_id", .string("u1"))]))
        XCTAssertEqual(error?.code, "invalid_field")
        XCTAssertEqual(error?.httpStatus, 400)
    }

    func testReceiptAtTheLimitIsAccepted() throws {
        let atLimit = String(repeating: "AAAA", count: VerifyRequest.maxReceiptCharacters / 4)
        let request = try VerifyRequest.parse(body: body([("receipt_data", .string(atLimit)), ("user_id", .string("u1"))]))
        XCTAssertEqual(decoded(request.receipt).count, VerifyRequest.maxReceiptCharacters / 4 * 3)
    }
}
