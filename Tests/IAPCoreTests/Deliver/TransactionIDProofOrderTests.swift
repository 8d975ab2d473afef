import IAPCore
import XCTest

final class TransactionIDProofOrderTests: XCTestCase {
    func testAProvenVerdictGivesItsOrderAndTheOthersTheirErrors() throws {
        let order = TransactionIDProof.TokenOrder(orderID: "o-1", userID: "u-1")
        XCTAssertEqual(try TransactionIDProof.Verdict.proven(order).order(), order)
        XCTAssertThrowsError(try TransactionIDProof.Verdict.orderUserMismatch.order()) {
            XCTAssertEqual(($0 as? APIError)?.code, "order_user_mismatch")
            XCTAssertEqual(($0 as? APIError)?.httpStatus, 409)
        }
        XCTAssertThrowsError(try TransactionIDProof.Verdict.proofRequired.order()) {
            XCTAssertEqual(($0 as? APIError)?.code, "proof_required")
            XCTAssertEqual(($0 as? APIError)?.httpStatus, 403)
        }
    }
}
