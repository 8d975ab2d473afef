import XCTest

@testable import IAPCore

final class OrderRequestTests: XCTestCase {
    private func parse(_ json: String) throws(APIError) -> OrderRequest {
        try OrderRequest.parse(body: Array(json.utf8))
    }

    private func apiError(_ json: String) -> APIError? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error
        }
    }

    func testFullRequest() throws {
        let request = try parse(#"{"user_id": "u-1001", "product_id": "zydj.product.pay_6", "price": "6.00"}"#)
        XCTAssertEqual(
            request, OrderRequest(userID: "u-1001", productID: "zydj.product.pay_6", price: Price(cents: 600)))
    }

    func testPriceIsOptionalAndNullMeansAbsent() throws {
        XCTAssertNil(try parse(#"{"user_id": "u", "product_id": "p"}"#).price)
        XCTAssertNil(try parse(#"{"user_id": "u", "product_id": "p", "price": null}"#).price)
    }

    func testPriceAsStringOrNumber() throws {
        XCTAssertEqual(try parse(#"{"user_id":"u","product_id":"p","price":6}"#).price, Price(cents: 600))
        XCTAssertEqual(try parse(#"{"user_id":"u","product_id":"p","price":6.00}"#).price, Price(cents: 600))
        XCTAssertEqual(try parse(#"{"user_id":"u","product_id":"p","price":"6.5"}"#).price, Price(cents: 650))
    }

    func testBadPriceIsInvalidField() {
        for price in [#""abc""#, "-1", "6.001", "true", #""6,00""#, "[6]", "{}", "6e2", #""""#] {
            let error = apiError(#"{"user_id":"u","product_id":"p","price":\#(price)}"#)
            XCTAssertEqual(error?.code, "invalid_field", price)
            XCTAssertEqual(error?.httpStatus, 400, price)
            XCTAssertEqual(error?.message.hasPrefix("price "), true, price)
        }
    }

    func testUserIDWithSQLMetacharactersAndNonASCIIComesThroughIntact() throws {
        let userID = "'; DROP TABLE orders; -- 用户😀\"\\"
        let body = JSONValue.object(["user_id": .string(userID), "product_id": .string("p")]).serialized()
        XCTAssertEqual(try OrderRequest.parse(body: body).userID, userID)
    }

    func testUserIDLengthCountsUnicodeScalars() throws {
        let sixtyFour = String(repeating: "é", count: 64)
        XCTAssertEqual(try parse(#"{"user_id":"\#(sixtyFour)","product_id":"p"}"#).userID, sixtyFour)
        let tooLong = String(repeating: "a", count: 65)
        XCTAssertEqual(apiError(#"{"user_id":"\#(tooLong)","product_id":"p"}"#)?.code, "invalid_field")
        // A thumbs-up with a skin tone is one Character but two scalars.
        let thirtyTwoEmoji = String(repeating: "👍🏽", count: 32)
        XCTAssertNoThrow(try parse(#"{"user_id":"\#(thirtyTwoEmoji)","product_id":"p"}"#))
        XCTAssertNotNil(apiError(#"{"user_id":"\#(thirtyTwoEmoji)x","product_id":"p"}"#))
    }

    func testMissingFieldsNameTheField() {
        XCTAssertEqual(
            apiError(#"{"product_id":"p"}"#),
            APIError(httpStatus: 400, code: "missing_field", message: "user_id is required"))
        XCTAssertEqual(
            apiError(#"{"user_id":"u"}"#),
            APIError(httpStatus: 400, code: "missing_field", message: "product_id is required"))
        XCTAssertEqual(apiError(#"{"user_id":null,"product_id":"p"}"#)?.code, "missing_field")
        XCTAssertEqual(apiError(#"{"user_id":"u","product_id":null}"#)?.message, "product_id is required")
    }

    func testWrongTypeOrLengthIsInvalidFieldNamingTheField() {
        let cases: [(String, String)] = [
            (#"{"user_id":1001,"product_id":"p"}"#, "user_id"),
            (#"{"user_id":"","product_id":"p"}"#, "user_id"),
            (#"{"user_id":"a\u0007b","product_id":"p"}"#, "user_id"),
            (#"{"user_id":"a\nb","product_id":"p"}"#, "user_id"),
            (#"{"user_id":"a\u0085b","product_id":"p"}"#, "user_id"),  // C1 control
            (#"{"user_id":["u"],"product_id":"p"}"#, "user_id"),
            (#"{"user_id":"u","product_id":""}"#, "product_id"),
            (#"{"user_id":"u","product_id":false}"#, "product_id"),
            (#"{"user_id":"u","product_id":"\#(String(repeating: "p", count: 129))"}"#, "product_id"),
        ]
        for (body, field) in cases {
            let error = apiError(body)
            XCTAssertEqual(error?.code, "invalid_field", body)
            XCTAssertEqual(error?.httpStatus, 400, body)
            XCTAssertEqual(error?.message.hasPrefix(field + " "), true, body)
        }
    }

    func testProductIDOf128ScalarsIsAccepted() throws {
        let productID = String(repeating: "p", count: 128)
        XCTAssertEqual(try parse(#"{"user_id":"u","product_id":"\#(productID)"}"#).productID, productID)
    }

    func testUnknownKeysAreIgnored() throws {
        let request = try parse(#"{"user_id":"u","product_id":"p","currency":"CNY","extra":{"a":[1]}}"#)
        XCTAssertEqual(request.userID, "u")
    }

    func testBodyThatIsNotAJSONObjectIsInvalidJSON() {
        for body in [
            "", "user_id=u&product_id=p", "[]", #""u""#, "null", #"{"user_id":"u",}"#, "{\"user_id\":\"u\"} x",
        ] {
            let error = apiError(body)
            XCTAssertEqual(error?.code, "invalid_json", body)
            XCTAssertEqual(error?.httpStatus, 400, body)
        }
        XCTAssertEqual(apiError("[]")?.message, "request body must be a JSON object")
        XCTAssertEqual(
            apiError(#"{"user_id": x}"#)?.message, "request body is not valid JSON: unexpected character at offset 12")
    }

    func testInvalidUTF8BodyIsInvalidJSON() {
        let body: [UInt8] = Array(#"{"user_id":""#.utf8) + [0xFF] + Array(#"","product_id":"p"}"#.utf8)
        XCTAssertThrowsError(try OrderRequest.parse(body: body)) { error in
            XCTAssertEqual((error as? APIError)?.code, "invalid_json")
        }
    }
}
