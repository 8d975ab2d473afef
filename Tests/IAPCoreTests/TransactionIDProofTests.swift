import XCTest

@testable import IAPCore

final class TransactionIDProofTests: XCTestCase {
    private let order = TransactionIDProof.TokenOrder(orderID: "5f0c3e8a-2b7d-4c1e-9a6f-3d2b1c0e9f87", userID: "u-1")

    func testWithoutAnOrderNamedByTheTokenProofIsRequired() {
        XCTAssertEqual(TransactionIDProof.verdict(tokenOrder: nil, requestOrderID: nil, requestUserID: "u-1"), .proofRequired)
        XCTAssertEqual(
            TransactionIDProof.verdict(tokenOrder: nil, requestOrderID: order.orderID, requestUserID: "u-1"),
            .proofRequired, "naming an order of one's own does not make someone else's transaction one's own")
    }

    func testTheTokenNamingAnOrderOfTheRequestsUserProvesIt() {
        XCTAssertEqual(TransactionIDProof.verdict(tokenOrder: order, requestOrderID: nil, requestUserID: "u-1"), .proven(order))
        XCTAssertEqual(
            TransactionIDProof.verdict(tokenOrder: order, requestOrderID: order.orderID, requestUserID: nil), .proven(order))
        XCTAssertEqual(
            TransactionIDProof.verdict(tokenOrder: order, requestOrderID: order.orderID, requestUserID: "u-1"),
            .proven(order))
    }

    func testARequestContradictingTheTokensOrderIsAMismatch() {
        XCTAssertEqual(
            TransactionIDProof.verdict(tokenOrder: order, requestOrderID: nil, requestUserID: "u-2"), .orderUserMismatch)
        XCTAssertEqual(
            TransactionIDProof.verdict(
                tokenOrder: order, requestOrderID: "00000000-0000-4000-8000-000000000000", requestUserID: "u-1"),
            .orderUserMismatch)
    }
}
