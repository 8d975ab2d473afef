import XCTest

@testable import IAPCore

final class NotificationChangeTests: XCTestCase {
    private let openOrder = RequestOrder(orderID: "order-1", userID: "u-1", productID: "pay_6", status: "created")
    private let usedOrder = RequestOrder(orderID: "order-1", userID: "u-1", productID: "pay_6", status: "delivered")

    private func purchase(
        order: RequestOrder? = nil, revoked: Bool = false, mayDeliver: Bool = true, product: String = "pay_6"
    ) -> NotifiedPurchase {
        NotifiedPurchase(productID: product, isRevoked: revoked, tokenOrder: order, mayDeliver: mayDeliver)
    }

    private func row(_ state: StoredTransaction.State, delivered: Bool? = nil, last: Int64? = nil) -> StoredTransaction {
        StoredTransaction(state: state, wasDelivered: delivered ?? (state == .delivered), lastNotificationSignedDate: last)
    }

    private func decide(
        _ type: String, at date: Int64 = 100, _ stored: StoredTransaction?, _ purchase: NotifiedPurchase
    ) -> NotificationChange {
        NotificationChange.decide(
            kind: NotificationKind(notificationType: type), signedDate: date, stored: stored, purchase: purchase)
    }

    func testKinds() {
        XCTAssertEqual(NotificationKind(notificationType: "ONE_TIME_CHARGE"), .charge)
        XCTAssertEqual(NotificationKind(notificationType: "REFUND"), .refund)
        XCTAssertEqual(NotificationKind(notificationType: "REVOKE"), .refund)
        XCTAssertEqual(NotificationKind(notificationType: "REFUND_REVERSED"), .refundReversed)
        for other in ["REFUND_DECLINED", "CONSUMPTION_REQUEST", "TEST", "SOMETHING_NEW"] {
            XCTAssertEqual(NotificationKind(notificationType: other), .informational, other)
        }
    }

    func testChargeGoesToTheTokensOpenOrderOfTheSameProduct() {
        XCTAssertEqual(decide("ONE_TIME_CHARGE", nil, purchase(order: openOrder)), .deliver(.order("order-1", userID: "u-1")))
    }

    func testChargeForAnOrderUsedOrOfAnotherProductMakesANewOrderOfItsUser() {
        XCTAssertEqual(decide("ONE_TIME_CHARGE", nil, purchase(order: usedOrder)), .deliver(.newOrder(userID: "u-1")))
        XCTAssertEqual(
            decide("ONE_TIME_CHARGE", nil, purchase(order: openOrder, product: "pay_30")),
            .deliver(.newOrder(userID: "u-1")))
    }

    func testChargeWithoutATokenOrNotAdmittedIsHeldUnclaimed() {
        XCTAssertEqual(decide("ONE_TIME_CHARGE", nil, purchase()), .holdUnclaimed)
        XCTAssertEqual(decide("ONE_TIME_CHARGE", nil, purchase(order: openOrder, mayDeliver: false)), .holdUnclaimed)
        XCTAssertEqual(NotificationChange.holdUnclaimed.effect, .unclaimed)
    }

    func testChargeOfAnUnclaimedTransactionWhoseOrderIsNowKnownDelivers() {
        XCTAssertEqual(decide("ONE_TIME_CHARGE", row(.unclaimed), purchase(order: openOrder)), .deliver(.order("order-1", userID: "u-1")))
        XCTAssertEqual(decide("ONE_TIME_CHARGE", row(.unclaimed), purchase()), .none(.unchanged))
    }

    func testChargeOfADeliveredOrRefundedTransactionChangesNothing() {
        XCTAssertEqual(decide("ONE_TIME_CHARGE", row(.delivered), purchase(order: openOrder)), .none(.unchanged))
        XCTAssertEqual(decide("ONE_TIME_CHARGE", row(.refunded), purchase(order: openOrder)), .none(.unchanged))
    }

    func testChargeOfARevokedTransactionRefundsIt() {
        XCTAssertEqual(decide("ONE_TIME_CHARGE", nil, purchase(order: openOrder, revoked: true)), .refund)
    }

    func testRefundOfAnyStateButRefunded() {
        XCTAssertEqual(decide("REFUND", nil, purchase()), .refund)
        XCTAssertEqual(decide("REFUND", row(.delivered), purchase()), .refund)
        XCTAssertEqual(decide("REVOKE", row(.unclaimed), purchase()), .refund)
        XCTAssertEqual(decide("REFUND", row(.refunded), purchase()), .none(.unchanged))
    }

    func testReversalRestoresWhatHadBeenDelivered() {
        XCTAssertEqual(decide("REFUND_REVERSED", row(.refunded, delivered: true), purchase()), .restore)
    }

    func testReversalOfANeverDeliveredRefundIsWhatItWouldHaveBeen() {
        XCTAssertEqual(
            decide("REFUND_REVERSED", row(.refunded, delivered: false), purchase(order: openOrder)),
            .deliver(.order("order-1", userID: "u-1")))
        XCTAssertEqual(decide("REFUND_REVERSED", row(.refunded, delivered: false), purchase()), .holdUnclaimed)
        XCTAssertEqual(decide("REFUND_REVERSED", nil, purchase(order: openOrder)), .deliver(.order("order-1", userID: "u-1")))
        XCTAssertEqual(decide("REFUND_REVERSED", row(.delivered), purchase()), .none(.unchanged))
    }

    func testInformationalTypesAreStoredOnly() {
        for type in ["REFUND_DECLINED", "CONSUMPTION_REQUEST", "TEST"] {
            let change = decide(type, row(.delivered, last: 500), purchase())
            XCTAssertEqual(change, .none(.stored), type)
            XCTAssertFalse(change.isApplied, type)
        }
    }

    func testOlderThanTheLastAppliedIsStale() {
        let change = decide("REFUND", at: 99, row(.delivered, last: 100), purchase())
        XCTAssertEqual(change, .none(.stale))
        XCTAssertFalse(change.isApplied)
        XCTAssertEqual(decide("REFUND", at: 100, row(.delivered, last: 100), purchase()), .refund)
    }

    /// Applies notifications one by one to a simulated row, as the service does under the row lock.
    private func replay(_ notifications: [(type: String, date: Int64)], startingDelivered: Bool) -> StoredTransaction? {
        var stored: StoredTransaction? = startingDelivered ? row(.delivered) : nil
        for (type, date) in notifications {
            let change = decide(type, at: date, stored, purchase(order: openOrder))
            let last = change.isApplied ? date : stored?.lastNotificationSignedDate
            let delivered = stored?.wasDelivered ?? false
            switch change {
            case .none: if let current = stored, change.isApplied {
                stored = StoredTransaction(state: current.state, wasDelivered: delivered, lastNotificationSignedDate: last)
            }
            case .deliver, .restore: stored = StoredTransaction(state: .delivered, wasDelivered: true, lastNotificationSignedDate: last)
            case .holdUnclaimed: stored = StoredTransaction(state: .unclaimed, wasDelivered: delivered, lastNotificationSignedDate: last)
            case .refund: stored = StoredTransaction(state: .refunded, wasDelivered: delivered, lastNotificationSignedDate: last)
            }
        }
        return stored
    }

    func testFlipsEndInTheSignedDateOrdersStateWhateverTheArrivalOrder() {
        let flips: [(type: String, date: Int64)] = [("REFUND_DECLINED", 1), ("REFUND", 2), ("REFUND_REVERSED", 3)]
        let inOrder = replay(flips, startingDelivered: true)?.state
        XCTAssertEqual(inOrder, .delivered)
        for permutation in [[0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            XCTAssertEqual(replay(permutation.map { flips[$0] }, startingDelivered: true)?.state, inOrder, "\(permutation)")
        }
        let refundLast: [(type: String, date: Int64)] = [("REFUND", 1), ("REFUND_REVERSED", 2), ("REFUND", 3)]
        for permutation in [[0, 1, 2], [2, 1, 0], [1, 2, 0], [0, 2, 1]] {
            XCTAssertEqual(replay(permutation.map { refundLast[$0] }, startingDelivered: true)?.state, .refunded, "\(permutation)")
        }
    }
}

final class NotificationAdmissionTests: XCTestCase {
    func testProductionAlwaysSandboxOnlyUnderAlwaysOrForASandboxUser() {
        func may(_ environment: String, _ policy: SandboxPolicy, users: [String] = [], user: String? = "u-1",
                 known: Bool = true) -> Bool {
            NotificationAdmission.mayDeliver(
                environment: environment, policy: policy, settingsAreKnown: known, sandboxUsers: users, userID: user)
        }
        for policy in SandboxPolicy.allCases { XCTAssertTrue(may("Production", policy)) }
        XCTAssertTrue(may("Sandbox", .always))
        XCTAssertFalse(may("Sandbox", .review))
        XCTAssertTrue(may("Sandbox", .review, users: ["u-1"]))
        XCTAssertFalse(may("Sandbox", .review, users: ["u-1"], known: false))
        XCTAssertFalse(may("Sandbox", .review, users: ["u-1"], user: nil))
        XCTAssertFalse(may("Sandbox", .never, users: ["u-1"]))
        XCTAssertFalse(may("Xcode", .review, users: ["u-1"]))
        XCTAssertTrue(may("Xcode", .always))
    }
}

final class ServerNotificationTests: XCTestCase {
    private func parse(_ text: String) throws -> ServerNotification {
        try ServerNotification(json: try XCTUnwrap(JSONParser.parse(Array(text.utf8)).objectValue))
    }

    func testReadsApplesFields() throws {
        let notification = try parse("""
            {"notificationType":"REFUND","subtype":null,"notificationUUID":"0A4E7C1E-9F2B-4C4B-8E1B-2C3D4E5F6A7B",
             "signedDate":1732430000123,"version":"2.0",
             "data":{"bundleId":"com.example.game","appAppleId":1,"environment":"Production",
                     "signedTransactionInfo":"a.b.c","newField":{"x":1}}}
            """)
        XCTAssertEqual(notification.notificationType, "REFUND")
        XCTAssertNil(notification.subtype)
        XCTAssertEqual(notification.notificationUUID, "0a4e7c1e-9f2b-4c4b-8e1b-2c3d4e5f6a7b")
        XCTAssertEqual(notification.signedDate, 1_732_430_000_123)
        XCTAssertEqual(notification.bundleID, "com.example.game")
        XCTAssertEqual(notification.environment, "Production")
        XCTAssertEqual(notification.signedTransactionInfo, "a.b.c")
        XCTAssertNil(notification.signedRenewalInfo)
        XCTAssertEqual(notification.kind, .refund)
    }

    func testATestNotificationCarriesNoTransaction() throws {
        let notification = try parse("""
            {"notificationType":"TEST","notificationUUID":"0a4e7c1e-9f2b-4c4b-8e1b-2c3d4e5f6a7b","signedDate":1,
             "data":{"bundleId":"com.example.game","environment":"Sandbox"}}
            """)
        XCTAssertNil(notification.signedTransactionInfo)
        XCTAssertEqual(notification.kind, .informational)
    }

    func testRefusesWhatItCannotStore() {
        let good = #""notificationType":"REFUND","notificationUUID":"0a4e7c1e-9f2b-4c4b-8e1b-2c3d4e5f6a7b","signedDate":1"#
        let data = #""data":{"bundleId":"b","environment":"Production"}"#
        let cases: [(String, String)] = [
            ("{\(good)}", "data"),
            (#"{"notificationUUID":"0a4e7c1e-9f2b-4c4b-8e1b-2c3d4e5f6a7b","signedDate":1,\#(data)}"#, "notificationType"),
            (#"{"notificationType":"REFUND","notificationUUID":"not-a-uuid","signedDate":1,\#(data)}"#, "notificationUUID"),
            (#"{"notificationType":"REFUND","notificationUUID":"0a4e7c1e-9f2b-4c4b-8e1b-2c3d4e5f6a7b","signedDate":"1",\#(data)}"#, "signedDate"),
            ("{\(good),\"data\":{\"environment\":\"Production\"}}", "bundleId"),
            ("{\(good),\"data\":{\"bundleId\":\"b\",\"environment\":\"Production\",\"signedTransactionInfo\":5}}", "signedTransactionInfo"),
        ]
        for (text, field) in cases {
            XCTAssertThrowsError(try parse(text), field) { error in
                XCTAssertEqual((error as? ServerNotification.DecodingError)?.field, field, text)
            }
        }
    }
}
