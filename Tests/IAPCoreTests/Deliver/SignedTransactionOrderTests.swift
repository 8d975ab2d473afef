import IAPCore
import XCTest

final class SignedTransactionOrderTests: XCTestCase {
    private let tokenOrderID = "3f2b8c1e-9d4a-4e6b-8a7c-1d2e3f4a5b6c"
    private let otherOrderID = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
    private var orders: [String: TransactionIDProof.TokenOrder] {
        [tokenOrderID: .init(orderID: tokenOrderID, userID: "u-1"), otherOrderID: .init(orderID: otherOrderID, userID: "u-2")]
    }

    private func request(orderID: String? = nil, userID: String? = nil) -> TransactionVerifyRequest {
        TransactionVerifyRequest(subject: .signedTransaction("a.b.c"), orderID: orderID, userID: userID)
    }

    private func resolve(token: String?, _ request: TransactionVerifyRequest) throws -> SignedTransactionOrder {
        try SignedTransactionOrder.resolve(appAccountToken: token, request: request) { self.orders[$0] }
    }

    private func proven(token: String?, _ request: TransactionVerifyRequest) throws -> SignedTransactionOrder {
        try SignedTransactionOrder.proven(appAccountToken: token, request: request) { self.orders[$0] }
    }

    private func code(_ body: () throws -> SignedTransactionOrder) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            return (error as? APIError)?.code ?? "\(error)"
        }
    }

    func testTheTokensOrderWinsWhateverCaseApplesUUIDIsIn() throws {
        let expected = SignedTransactionOrder(orderID: tokenOrderID, userID: "u-1")
        XCTAssertEqual(try resolve(token: tokenOrderID.uppercased(), request()), expected)
        XCTAssertEqual(try resolve(token: tokenOrderID, request(orderID: tokenOrderID, userID: "u-1")), expected)
    }

    func testARequestThatContradictsTheTokenIsRefused() {
        XCTAssertEqual(code { try resolve(token: tokenOrderID, request(orderID: otherOrderID)) }, "order_user_mismatch")
        XCTAssertEqual(code { try resolve(token: tokenOrderID, request(userID: "u-2")) }, "order_user_mismatch")
    }

    func testWithoutATokensOrderTheRequestsOrderOrUserDecides() throws {
        let unknownToken = "00000000-0000-4000-8000-000000000000"
        XCTAssertEqual(
            try resolve(token: unknownToken, request(orderID: otherOrderID)),
            SignedTransactionOrder(orderID: otherOrderID, userID: "u-2"))
        XCTAssertEqual(try resolve(token: "not-a-uuid", request(userID: "u-9")), SignedTransactionOrder(orderID: nil, userID: "u-9"))
        XCTAssertEqual(code { try resolve(token: nil, request(orderID: unknownToken)) }, "unknown_order")
        XCTAssertEqual(code { try resolve(token: nil, request(orderID: otherOrderID, userID: "u-1")) }, "order_user_mismatch")
        XCTAssertEqual(code { try resolve(token: nil, request()) }, "missing_field")
    }

    func testABareTransactionIDNeedsTheTokensOrder() throws {
        XCTAssertEqual(try proven(token: tokenOrderID, request(userID: "u-1")), SignedTransactionOrder(orderID: tokenOrderID, userID: "u-1"))
        XCTAssertEqual(code { try proven(token: nil, request(orderID: otherOrderID, userID: "u-2")) }, "proof_required")
        XCTAssertEqual(code { try proven(token: otherOrderID.uppercased(), request(userID: "u-1")) }, "order_user_mismatch")
    }

    func testTheReadersErrorIsPassedOn() {
        struct DatabaseDown: Error {}
        XCTAssertThrowsError(
            try SignedTransactionOrder.resolve(appAccountToken: tokenOrderID, request: request()) { _ in throw DatabaseDown() }
        ) { XCTAssertTrue($0 is DatabaseDown) }
    }
}
