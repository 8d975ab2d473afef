import XCTest

@testable import IAPCore

final class GooglePurchaseDecisionTests: XCTestCase {
    private let request = GoogleVerifyRequest(
        packageName: "com.example.game", productID: "gems_100", purchaseToken: "token-1", userID: "u-1", appVersion: "1.3.0")
    private let packages = ["com.example.game", "com.example.other"]

    private func purchase(
        _ state: GooglePurchase.State = .purchased, test: Bool = false, orderID: String? = "GPA.1",
        items: [GooglePurchase.LineItem] = [.init(productID: "gems_100", quantity: 2)]
    ) -> GooglePurchase {
        GooglePurchase(lineItems: items, state: state, orderID: orderID, isTestPurchase: test)
    }

    private func decide(
        _ purchase: GooglePurchase, request: GoogleVerifyRequest? = nil, policy: SandboxPolicy = .review,
        known: Bool = true, reviewVersion: String = "", sandboxUsers: [String] = []
    ) -> GooglePurchaseDecision.Verdict {
        GooglePurchaseDecision.decide(
            purchase: purchase, request: request ?? self.request, packages: packages,
            sandbox: .init(policy: policy, settingsAreKnown: known, reviewVersion: reviewVersion, sandboxUsers: sandboxUsers),
            userID: "u-1")
    }

    func testAPaidPurchaseOfTheProductAskedForIsDeliverable() {
        XCTAssertEqual(
            decide(purchase()),
            .deliverable(.init(transactionID: "GPA.1", quantity: 2, environment: .production)))
        XCTAssertEqual(
            decide(purchase(orderID: nil)),
            .deliverable(.init(
                transactionID: GoogleTransactionID.of(orderID: nil, purchaseToken: "token-1"), quantity: 2,
                environment: .production)))
    }

    func testAPackageNotConfiguredOrAnotherProductIsRejected() {
        let elsewhere = GoogleVerifyRequest(
            packageName: "com.evil.game", productID: "gems_100", purchaseToken: "token-1", userID: "u-1")
        guard case .rejected = decide(purchase(), request: elsewhere) else { return XCTFail("package not configured") }
        guard case .rejected = decide(purchase(items: [.init(productID: "gems_1000", quantity: 1)])) else {
            return XCTFail("another product")
        }
        let mixed = purchase(items: [.init(productID: "gems_100", quantity: 1), .init(productID: "sword", quantity: 1)])
        guard case .rejected = decide(mixed) else { return XCTFail("a line item of another product") }
    }

    func testPendingIsNeverDeliveredAndCancelledIsNotPaid() {
        XCTAssertEqual(decide(purchase(.pending)), .pending)
        XCTAssertEqual(decide(purchase(.pending, test: true), policy: .never), .pending)
        XCTAssertEqual(decide(purchase(.cancelled)), .notPaid)
    }

    func testATestPurchaseIsSandboxUnderTheSandboxPolicy() {
        let sandbox = GooglePurchaseDecision.Verdict.deliverable(
            .init(transactionID: "GPA.1", quantity: 2, environment: .sandbox))
        XCTAssertEqual(decide(purchase(test: true), policy: .always), sandbox)
        guard case .rejected = decide(purchase(test: true), policy: .never) else { return XCTFail("never") }
        guard case .rejected = decide(purchase(test: true)) else { return XCTFail("review, outside review") }
        XCTAssertEqual(decide(purchase(test: true), reviewVersion: "1.3.0"), sandbox)
        XCTAssertEqual(decide(purchase(test: true), sandboxUsers: ["u-1"]), sandbox)
        XCTAssertEqual(decide(purchase(test: true), known: false), .settingsUnknown)
        XCTAssertEqual(
            decide(purchase(), policy: .never), .deliverable(.init(transactionID: "GPA.1", quantity: 2, environment: .production)))
    }
}

final class GoogleAccountProofTests: XCTestCase {
    private let order = "0f8fad5b-d9cb-469f-a165-70867728950e"
    private let other = "7c9e6679-7425-40de-944b-e07fc1f90ae7"

    func testWithoutAnAccountIDTheRequestsOrderElseANewOne() {
        XCTAssertEqual(
            GoogleAccountProof.verdict(accountID: nil, accountOrder: nil, requestOrderID: order, requestUserID: nil),
            .order(order))
        XCTAssertEqual(
            GoogleAccountProof.verdict(accountID: nil, accountOrder: nil, requestOrderID: nil, requestUserID: "u-1"),
            .newOrder)
    }

    func testTheAccountIDMustNameAnOrderOfTheRequestsUser() {
        let mine = GoogleAccountProof.AccountOrder(orderID: order, userID: "u-1")
        XCTAssertEqual(GoogleAccountProof.orderID(named: order.uppercased()), order)
        XCTAssertNil(GoogleAccountProof.orderID(named: "player-42"))
        XCTAssertEqual(
            GoogleAccountProof.verdict(accountID: order, accountOrder: mine, requestOrderID: nil, requestUserID: "u-1"),
            .order(order))
        XCTAssertEqual(
            GoogleAccountProof.verdict(
                accountID: order.uppercased(), accountOrder: nil, requestOrderID: order, requestUserID: nil),
            .order(order), "the request's own order_id")
        XCTAssertEqual(
            GoogleAccountProof.verdict(accountID: order, accountOrder: mine, requestOrderID: nil, requestUserID: "u-2"),
            .orderUserMismatch, "another user's order")
        XCTAssertEqual(
            GoogleAccountProof.verdict(accountID: order, accountOrder: mine, requestOrderID: other, requestUserID: "u-1"),
            .orderUserMismatch, "not the order the request names")
        XCTAssertEqual(
            GoogleAccountProof.verdict(accountID: "player-42", accountOrder: nil, requestOrderID: nil, requestUserID: "u-1"),
            .orderUserMismatch, "names no order")
    }
}
