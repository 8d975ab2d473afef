import XCTest

@testable import IAPCore

final class TransactionVerifyRequestTests: XCTestCase {
    private let jws = "eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2lnbmF0dXJl"
    private let orderID = "0B6F1B2E-3C4D-4E5F-8A9B-0C1D2E3F4A5B"

    private func parse(_ json: String) throws(APIError) -> TransactionVerifyRequest {
        try TransactionVerifyRequest.parse(body: Array(json.utf8))
    }

    private func apiError(_ json: String) -> APIError? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error
        }
    }

    func testSignedTransactionWithEveryField() throws {
        let request = try parse("""
            {"signed_transaction":"\(jws)","order_id":"\(orderID)","user_id":"u-1001","app_version":"1.3.0","x":1}
            """)
        XCTAssertEqual(request.subject, .signedTransaction(jws))
        XCTAssertEqual(request.orderID, orderID.lowercased())
        XCTAssertEqual(request.userID, "u-1001")
        XCTAssertEqual(request.appVersion, "1.3.0")
    }

    func testSignedTransactionAloneIsEnough() throws {
        // The transaction's appAccountToken may name the order: the route decides once the JWS is verified.
        let request = try parse(#"{"signed_transaction":"\#(jws)","user_id":null}"#)
        XCTAssertEqual(request.subject, .signedTransaction(jws))
        XCTAssertNil(request.userID)
        XCTAssertNil(request.orderID)
    }

    func testTransactionIDAsStringOrInteger() throws {
        XCTAssertEqual(
            try parse(#"{"transaction_id":"2000000123456789","user_id":"u"}"#).subject, .transactionID("2000000123456789"))
        XCTAssertEqual(
            try parse(#"{"transaction_id":2000000123456789,"order_id":"\#(orderID)"}"#).subject,
            .transactionID("2000000123456789"))
    }

    func testSignedTransactionWinsOverTransactionID() throws {
        XCTAssertEqual(
            try parse(#"{"signed_transaction":"\#(jws)","transaction_id":"1","user_id":"u"}"#).subject,
            .signedTransaction(jws))
    }

    func testOneOfTheTwoIsRequired() {
        XCTAssertEqual(apiError(#"{"user_id":"u"}"#)?.code, "missing_field")
        XCTAssertEqual(apiError(#"{"signed_transaction":null,"transaction_id":null,"user_id":"u"}"#)?.code, "missing_field")
        XCTAssertEqual(apiError(#"{"transaction_id":"1"}"#)?.message, "user_id is required with transaction_id when order_id is absent")
    }

    func testBadSignedTransactionText() {
        XCTAssertEqual(apiError(#"{"signed_transaction":42,"user_id":"u"}"#)?.code, "invalid_field")
        XCTAssertEqual(apiError(#"{"signed_transaction":"","user_id":"u"}"#)?.code, "invalid_field")
        XCTAssertEqual(apiError(#"{"signed_transaction":"a b.c","user_id":"u"}"#)?.code, "invalid_field")
        XCTAssertEqual(apiError(#"{"signed_transaction":"a\u00e9.b.c","user_id":"u"}"#)?.code, "invalid_field")
        let longest = String(repeating: "a", count: TransactionVerifyRequest.maxSignedTransactionCharacters)
        XCTAssertNil(apiError(#"{"signed_transaction":"\#(longest)","user_id":"u"}"#))
        XCTAssertEqual(apiError(#"{"signed_transaction":"\#(longest)a","user_id":"u"}"#)?.code, "invalid_field")
    }

    func testNotBase64URLIsLeftToTheVerifier() throws {
        // A JWS of bad base64url must reach SignedDataVerifier: it is invalid_signed_data, with its audit row.
        XCTAssertEqual(try parse(#"{"signed_transaction":"!!!.%%%.***","user_id":"u"}"#).subject, .signedTransaction("!!!.%%%.***"))
    }

    func testOtherFieldsAreCheckedAsForReceipts() {
        XCTAssertEqual(apiError(#"{"signed_transaction":"\#(jws)","order_id":"nope"}"#)?.code, "invalid_field")
        XCTAssertEqual(apiError(#"{"signed_transaction":"\#(jws)","user_id":"a\u0007"}"#)?.code, "invalid_field")
        XCTAssertEqual(apiError(#"{"signed_transaction":"\#(jws)","user_id":"u","app_version":""}"#)?.code, "invalid_field")
        XCTAssertEqual(apiError(#"{"transaction_id":"12a","user_id":"u"}"#)?.code, "invalid_field")
        XCTAssertEqual(apiError(#"["signed_transaction"]"#)?.code, "invalid_json")
    }

    func testLowercaseUUID() {
        XCTAssertEqual(VerifyRequest.lowercaseUUID(orderID), orderID.lowercased())
        XCTAssertNil(VerifyRequest.lowercaseUUID("not-a-uuid"))
    }
}
