import IAPCore
import XCTest

final class DeliveryOrderBindingTests: XCTestCase {
    private let order = RequestOrder(
        orderID: "5f0c3e8a-2b7d-4c1e-9a6f-3d2b1c0e9f87", userID: "u-1001", productID: "zydj.product.pay_6",
        status: "created")

    func testBindsAnOpenOrderOfTheSameProduct() {
        XCTAssertTrue(OrderBinding.binds(AppleFixtures.transaction("1"), to: order, alreadyBound: false))
    }

    func testDoesNotBindAnotherProduct() {
        let other = AppleFixtures.transaction("1", product: "zydj.product.pay_40")
        XCTAssertFalse(OrderBinding.binds(other, to: order, alreadyBound: false))
    }

    func testDoesNotBindAClosedOrder() {
        for status in ["delivered", "refunded", "Created", ""] {
            let closed = RequestOrder(orderID: "o", userID: "u", productID: "zydj.product.pay_6", status: status)
            XCTAssertFalse(OrderBinding.binds(AppleFixtures.transaction("1"), to: closed, alreadyBound: false), status)
        }
    }

    func testDoesNotBindAnOrderTwiceInOneRequest() {
        XCTAssertFalse(OrderBinding.binds(AppleFixtures.transaction("2"), to: order, alreadyBound: true))

        var binding = OrderBinding(order: order)
        XCTAssertEqual(binding.claim(for: AppleFixtures.transaction("1")), order.orderID)
        XCTAssertTrue(binding.isBound)
        XCTAssertNil(binding.claim(for: AppleFixtures.transaction("2")))
    }

    func testWithoutAnOrderNothingBinds() {
        var binding = OrderBinding(order: nil)
        XCTAssertNil(binding.claim(for: AppleFixtures.transaction("1")))
        XCTAssertFalse(binding.isBound)
    }

    func testTheNamedTransactionTakesTheOrder() {
        // Two purchases of the same product in one receipt: the one the app named pays for the order.
        let receipt = ReceiptTransactions(
            inApp: [AppleFixtures.transaction("1"), AppleFixtures.transaction("2")], latestReceiptInfo: [],
            namedTransactionID: "2")
        var binding = OrderBinding(order: order)

        let orderIDs = receipt.transactions.map { binding.claim(for: $0) }

        XCTAssertEqual(receipt.transactions.map(\.transactionID), ["2", "1"])
        XCTAssertEqual(orderIDs, [order.orderID, nil])
    }

    func testAPurchaseOfAnotherProductLeavesTheOrderForTheRightOne() {
        let receipt = ReceiptTransactions(
            inApp: [AppleFixtures.transaction("1", product: "zydj.product.pay_40"), AppleFixtures.transaction("2")],
            latestReceiptInfo: [], namedTransactionID: nil)
        var binding = OrderBinding(order: order)

        XCTAssertEqual(receipt.transactions.map { binding.claim(for: $0) }, [nil, order.orderID])
    }
}
