import IAPCore
import XCTest

final class DeliveryBatchPlanTests: XCTestCase {
    private func member(
        _ receiptID: UInt64, order: String? = nil, _ transactions: AppleTransaction..., named: String? = nil
    ) -> BatchPlan.Member {
        BatchPlan.Member(
            receiptID: receiptID, userID: "u-\(receiptID)", orderID: order,
            transactions: ReceiptTransactions(inApp: transactions, latestReceiptInfo: [], namedTransactionID: named))
    }

    private func counter() -> () -> String {
        var next = 0
        return {
            next += 1
            return "new-\(next)"
        }
    }

    func testPlainMembersMayAllJoin() {
        let members = [member(1, AppleFixtures.transaction("1")), member(2, order: "o-2", AppleFixtures.transaction("2")),
                       member(3)]
        XCTAssertEqual(BatchPlan.joinable(members) { _ in true }, [true, true, true])
    }

    func testARefundOrAProductOutsideTheCatalogGoesOneByOne() {
        let members = [member(1, AppleFixtures.transaction("1"), AppleFixtures.transaction("2", cancelledAtMs: 1)),
                       member(2, AppleFixtures.transaction("3", product: "retired")),
                       member(3, AppleFixtures.transaction("4"))]
        XCTAssertEqual(BatchPlan.joinable(members) { $0 != "retired" }, [false, false, true])
    }

    func testTheSecondOfTwoSharingATransactionOrAnOrderGoesOneByOne() {
        let members = [member(1, order: "o-1", AppleFixtures.transaction("1")),
                       member(2, AppleFixtures.transaction("9"), AppleFixtures.transaction("1")),
                       member(3, order: "o-1", AppleFixtures.transaction("3")),
                       member(4, AppleFixtures.transaction("4"))]
        XCTAssertEqual(BatchPlan.joinable(members) { _ in true }, [true, false, false, true])
    }

    func testALeftOutMemberTakesNothingFromTheOthers() {
        // Member 2 is left out, so transaction 9 is not taken: member 3 may deliver it.
        let members = [member(1, AppleFixtures.transaction("1")),
                       member(2, AppleFixtures.transaction("9"), AppleFixtures.transaction("1")),
                       member(3, AppleFixtures.transaction("9"))]
        XCTAssertEqual(BatchPlan.joinable(members) { _ in true }, [true, false, true])
    }

    func testTheRequestOrderTakesTheNamedTransactionAndTheRestGetNewOrders() {
        let order = RequestOrder(orderID: "o-1", userID: "u-1", productID: "zydj.product.pay_6", status: "created")
        let plan = BatchPlan(
            members: [member(1, order: "o-1", AppleFixtures.transaction("1"), AppleFixtures.transaction("2"), named: "2"),
                      member(2, AppleFixtures.transaction("3", product: "zydj.product.pay_40"))],
            requestOrders: ["o-1": order], newOrderID: counter())
        XCTAssertEqual(plan.rows.map(\.transaction.transactionID), ["2", "1", "3"])
        XCTAssertEqual(plan.rows.map(\.member), [0, 0, 1])
        XCTAssertEqual(plan.rows.map(\.orderID), ["o-1", "new-1", "new-2"])
        XCTAssertEqual(plan.rows.map(\.makesOrder), [false, true, true])
        XCTAssertEqual(plan.paidOrderIDs, ["o-1"])
        XCTAssertEqual(plan.answers.map { $0.map(\.orderID) }, [["o-1", "new-1"], ["new-2"]])
        XCTAssertTrue(plan.answers.joined().allSatisfy { $0.state == .delivered })
    }

    func testAClosedOrMissingRequestOrderBindsNothing() {
        let paid = RequestOrder(orderID: "o-1", userID: "u-1", productID: "zydj.product.pay_6", status: "delivered")
        let plan = BatchPlan(
            members: [member(1, order: "o-1", AppleFixtures.transaction("1")),
                      member(2, order: "o-gone", AppleFixtures.transaction("2"))],
            requestOrders: ["o-1": paid], newOrderID: counter())
        XCTAssertEqual(plan.rows.map(\.orderID), ["new-1", "new-2"])
        XCTAssertEqual(plan.paidOrderIDs, [])
    }

    func testAMemberWithoutTransactionsHasAnEmptyAnswer() {
        let plan = BatchPlan(members: [member(1)], requestOrders: [:], newOrderID: counter())
        XCTAssertEqual(plan.rows, [])
        XCTAssertEqual(plan.answers, [[]])
    }
}
