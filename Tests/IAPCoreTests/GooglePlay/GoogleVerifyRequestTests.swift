import XCTest

@testable import IAPCore

final class GoogleVerifyRequestTests: XCTestCase {
    private let orderID = "0F8FAD5B-D9CB-469F-A165-70867728950E"

    private func parse(_ json: String) throws(APIError) -> GoogleVerifyRequest {
        try GoogleVerifyRequest.parse(body: Array(json.utf8))
    }

    private func apiError(_ json: String) -> APIError? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error
        }
    }

    func testAFullRequest() throws {
        let request = try parse(
            #"{"package_name": "com.example.game", "product_id": "gems_100", "purchase_token": "abc.AO-J1Oz_x", "#
                + #""order_id": "\#(orderID)", "user_id": "u-1001", "app_version": "1.3.0", "extra": 1}"#)
        XCTAssertEqual(
            request,
            GoogleVerifyRequest(
                packageName: "com.example.game", productID: "gems_100", purchaseToken: "abc.AO-J1Oz_x",
                orderID: orderID.lowercased(), userID: "u-1001", appVersion: "1.3.0"))
    }

    func testUserIDIsRequiredOnlyWithoutAnOrder() throws {
        let base = #""package_name": "com.example.game", "product_id": "gems_100", "purchase_token": "t""#
        XCTAssertEqual(
            apiError("{\(base)}"),
            APIError.missingField("user_id", "is required when order_id is absent"))
        XCTAssertEqual(apiError("{\(base), \"user_id\": null}")?.code, "missing_field")
        XCTAssertNil(try parse("{\(base), \"order_id\": \"\(orderID)\"}").userID)
        XCTAssertEqual(try parse("{\(base), \"user_id\": \"u\"}").orderID, nil)
    }

    func testEachRequiredFieldIsNamed() {
        for (json, field) in [
            (#"{"product_id": "p", "purchase_token": "t", "user_id": "u"}"#, "package_name"),
            (#"{"package_name": "com.a", "purchase_token": "t", "user_id": "u"}"#, "product_id"),
            (#"{"package_name": "com.a", "product_id": "p", "user_id": "u"}"#, "purchase_token"),
        ] {
            let error = apiError(json)
            XCTAssertEqual(error?.code, "missing_field", json)
            XCTAssertEqual(error?.httpStatus, 400)
            XCTAssertTrue(error?.message.hasPrefix(field) ?? false, json)
        }
    }

    func testThePurchaseTokenIsOneTo4096PrintableASCII() throws {
        func token(_ value: String) -> String {
            #"{"package_name": "com.a", "product_id": "p", "user_id": "u", "purchase_token": \#(value)}"#
        }
        XCTAssertNoThrow(try parse(token("\"" + String(repeating: "a", count: 4096) + "\"")))
        for bad in ["\"\"", "\"" + String(repeating: "a", count: 4097) + "\"", "\"a b\"", "\"caf\u{e9}\"",
                    "\"a\\u0000b\"", "42", "[\"t\"]"] {
            let error = apiError(token(bad))
            XCTAssertEqual(error?.code, "invalid_field", bad)
            XCTAssertTrue(error?.message.hasPrefix("purchase_token") ?? false)
        }
    }

    func testPackageAndProductShapes() {
        for (package, valid) in [("com.example.game", true), ("a", true), ("com.Example_1.x", true),
                                 ("com..game", false), ("1com.game", false), ("com.game.", false), ("com/game", false)] {
            let json = #"{"package_name": "\#(package)", "product_id": "p", "purchase_token": "t", "user_id": "u"}"#
            XCTAssertEqual(apiError(json) == nil, valid, package)
        }
        for (product, valid) in [("gems_100", true), ("com.example.gems-1", true), ("_gems", false), ("gems 100", false),
                                 (String(repeating: "g", count: 129), false)] {
            let json = #"{"package_name": "com.a", "product_id": "\#(product)", "purchase_token": "t", "user_id": "u"}"#
            XCTAssertEqual(apiError(json) == nil, valid, product)
        }
    }

    func testTheOtherVerifyRoutesCodesForBadJSONAndOrderAndUser() {
        XCTAssertEqual(apiError("[1]")?.code, "invalid_json")
        XCTAssertEqual(apiError("{")?.code, "invalid_json")
        let base = #""package_name": "com.a", "product_id": "p", "purchase_token": "t""#
        XCTAssertEqual(apiError("{\(base), \"order_id\": \"42\"}")?.message, "order_id must be a UUID (8-4-4-4-12 hex digits)")
        XCTAssertEqual(apiError("{\(base), \"user_id\": \"\"}")?.code, "invalid_field")
        XCTAssertEqual(apiError("{\(base), \"user_id\": \"u\", \"app_version\": 3}")?.code, "invalid_field")
    }
}
