import IAPCore
import XCTest

final class VerifyAnswerTests: XCTestCase {
    // MARK: - The status table of docs/api.md "The verify answer"

    func testStatusTable() {
        let table: [(VerifyStatus, String, Int, Int, Bool, Int?)] = [
            (.delivered, "delivered", 2, 200, true, nil),
            (.alreadyDelivered, "already_delivered", 1, 200, true, nil),
            (.notPaid, "not_paid", 3, 200, true, nil),
            (.rejected, "rejected", 3, 200, true, nil),
            (.pending, "pending", 4, 202, false, nil),
            (.retryLater, "retry_later", 4, 503, false, 5),
        ]
        XCTAssertEqual(table.count, VerifyStatus.allCases.count)
        for (status, name, code, http, finish, retryAfter) in table {
            XCTAssertEqual(status.rawValue, name)
            XCTAssertEqual(status.code, code, name)
            XCTAssertEqual(status.httpStatus, http, name)
            XCTAssertEqual(status.finishTransaction, finish, name)
            XCTAssertEqual(status.retryAfterSeconds, retryAfter, name)
            XCTAssertEqual(VerifyAnswer(status: status).retryAfterSeconds, retryAfter, name)
            XCTAssertEqual(VerifyAnswer(status: status).httpStatus, http, name)
        }
        XCTAssertEqual(TransactionState.allCases.map(\.rawValue), ["delivered", "already_delivered", "refunded", "rejected"])
    }

    // MARK: - Final status precedence

    private func final(_ states: [TransactionState], named: String? = nil, present: Bool = true) -> VerifyStatus {
        VerifyStatus.finalStatus(states: states, namedTransactionID: named, namedTransactionPresent: present)
    }

    func testANamedTransactionMissingFromTheReceiptIsPending() {
        XCTAssertEqual(final([], named: "1000000117894869", present: false), .pending)
        // Even when this request delivered others: the app must not finish the named one.
        XCTAssertEqual(final([.delivered, .alreadyDelivered], named: "1000000117894869", present: false), .pending)
    }

    func testDeliveredWinsOverEverythingElse() {
        XCTAssertEqual(final([.refunded, .alreadyDelivered, .delivered]), .delivered)
        XCTAssertEqual(final([.delivered], named: "1", present: true), .delivered)
    }

    func testAlreadyDeliveredWhenNothingIsNew() {
        XCTAssertEqual(final([.alreadyDelivered, .refunded]), .alreadyDelivered)
        XCTAssertEqual(final([.alreadyDelivered], named: "1", present: true), .alreadyDelivered)
    }

    func testRejectedTransactionsAloneAreRejected() {
        XCTAssertEqual(final([.rejected, .rejected]), .rejected)
        XCTAssertEqual(final([.rejected, .alreadyDelivered]), .alreadyDelivered)
    }

    func testOnlyRefundsOrNothingIsNotPaid() {
        XCTAssertEqual(final([.refunded, .refunded]), .notPaid)
        XCTAssertEqual(final([]), .notPaid)
    }

    func testAnEmptyNamedTransactionIDNamesNone() {
        XCTAssertEqual(final([], named: "", present: false), .notPaid)
    }

    // MARK: - The answer's JSON

    private let orderID = "5f0c3e8a-2b7d-4c1e-9a6f-3d2b1c0e9f87"

    func testDeliveredAnswerHasAPIMdShape() throws {
        let reply = AppleFixtures.reply(MadeUpAnswers.productionOnePurchase)
        let receipt = try XCTUnwrap(reply.receipt)
        let answer = VerifyAnswer(
            status: .delivered, environment: .production, appleStatus: 0, orderID: orderID, app: receipt,
            transactions: [TransactionAnswer(transaction: receipt.inApp[0], state: .delivered, orderID: orderID)])

        XCTAssertEqual(answer.json().serializedString, #"""
            {"status":"delivered","code":2,"finish_transaction":true,"environment":"Production","apple_status":0,\#
            "order_id":"5f0c3e8a-2b7d-4c1e-9a6f-3d2b1c0e9f87",\#
            "app":{"bundle_id":"com.example.game","application_version":"1.0","app_item_id":null},\#
            "transactions":[{"transaction_id":"1000000117894869","original_transaction_id":"1000000117894869",\#
            "product_id":"zydj.product.pay_6","quantity":1,"purchase_date":"2014-07-24T09:11:01Z",\#
            "cancellation_date":null,"state":"delivered","order_id":"5f0c3e8a-2b7d-4c1e-9a6f-3d2b1c0e9f87"}]}
            """#)
    }

    func testKeysAndTypesOfEveryField() throws {
        let reply = AppleFixtures.reply(MadeUpAnswers.threePurchasesOneRefundedWithLatestInfo)
        let receipt = try XCTUnwrap(reply.receipt)
        let transactions = ReceiptTransactions(reply: reply, namedTransactionID: nil).transactions
        let answer = VerifyAnswer(
            status: .delivered, environment: .production, appleStatus: 0, orderID: nil, app: receipt,
            transactions: transactions.map {
                TransactionAnswer(transaction: $0, state: $0.isRefunded ? .refunded : .delivered, orderID: $0.isRefunded ? nil : orderID)
            })
        let json = answer.json()
        let object = try XCTUnwrap(json.objectValue)

        XCTAssertEqual(object.members.map(\.key), [
            "status", "code", "finish_transaction", "environment", "apple_status", "order_id", "app", "transactions",
        ])
        XCTAssertEqual(object["code"], .number("2"))
        XCTAssertEqual(object["finish_transaction"], .bool(true))
        XCTAssertEqual(object["apple_status"], .number("0"))
        XCTAssertEqual(object["order_id"], .null)
        XCTAssertEqual(json["app"]?["app_item_id"], .number("1234567890"), "Apple's raw value")
        XCTAssertEqual(json["app"]?["application_version"], .string("1.3.0"))

        let entries = try XCTUnwrap(object["transactions"]?.arrayValue)
        XCTAssertEqual(entries.count, 5)
        for entry in entries {
            XCTAssertEqual(entry.objectValue?.members.map(\.key), [
                "transaction_id", "original_transaction_id", "product_id", "quantity", "purchase_date",
                "cancellation_date", "state", "order_id",
            ])
        }
        XCTAssertEqual(entries[1]["quantity"], .number("2"))
        XCTAssertEqual(entries[1]["purchase_date"], .string("2014-07-24T09:12:00Z"))
        XCTAssertEqual(entries[3]["state"], .string("refunded"))
        XCTAssertEqual(entries[3]["cancellation_date"], .string("2014-07-25T10:00:00Z"))
        XCTAssertEqual(entries[3]["order_id"], .null)
        XCTAssertEqual(entries[4]["order_id"], .string(orderID))

        // What the writer produces, the parser reads back unchanged.
        XCTAssertEqual(try JSONParser.parse(json.serialized()), json)
    }

    func testRetryLaterBeforeAppleIsReachedHasNullsNotMissingKeys() {
        let answer = VerifyAnswer(status: .retryLater, orderID: orderID)

        XCTAssertEqual(answer.json().serializedString, #"""
            {"status":"retry_later","code":4,"finish_transaction":false,"environment":null,"apple_status":null,\#
            "order_id":"5f0c3e8a-2b7d-4c1e-9a6f-3d2b1c0e9f87","app":null,"transactions":[]}
            """#)
        XCTAssertEqual(answer.httpStatus, 503)
        XCTAssertEqual(answer.retryAfterSeconds, 5)
    }

    func testNotPaidAfterAnInvalidReceiptCarriesAppleStatus() {
        let answer = VerifyAnswer(status: .notPaid, environment: .production, appleStatus: 21003)

        XCTAssertEqual(answer.json()["apple_status"], .number("21003"))
        XCTAssertEqual(answer.json()["environment"], .string("Production"))
        XCTAssertEqual(answer.json()["app"], .null)
        XCTAssertNil(answer.retryAfterSeconds)
    }

    func testIOS6ReceiptFillsAppFromBidBvrsAndItemID() throws {
        let receipt = try XCTUnwrap(AppleFixtures.reply(SeedAnswers.ios6TransactionReceipt).receipt)
        let answer = VerifyAnswer(status: .pending, environment: .production, appleStatus: 0, app: receipt)

        XCTAssertEqual(answer.json()["app"]?.serializedString,
                       #"{"bundle_id":"com.netease.sdk.test","application_version":"1.0","app_item_id":"892617314"}"#)
        XCTAssertEqual(answer.json()["finish_transaction"], .bool(false))
        XCTAssertEqual(answer.httpStatus, 202)
    }

    func testTransactionWithoutDatesWritesNulls() {
        let transaction = AppleTransaction(transactionID: "9", productID: "p", quantity: 3)
        let entry = TransactionAnswer(transaction: transaction, state: .alreadyDelivered, orderID: nil).json()

        XCTAssertEqual(entry.serializedString, #"""
            {"transaction_id":"9","original_transaction_id":"9","product_id":"p","quantity":3,\#
            "purchase_date":null,"cancellation_date":null,"state":"already_delivered","order_id":null}
            """#)
    }

    func testASignedTransactionsAnswerShowsTheEnvironmentAppleSigned() {
        for signed in SignedTransactionAdmission.Environment.allCases {
            let answer = VerifyAnswer(
                status: .rejected, environment: signed.deliveryEnvironment, signedEnvironment: signed)
            XCTAssertEqual(answer.json().objectValue?["environment"], .string(signed.rawValue))
        }
        XCTAssertEqual(
            VerifyAnswer(status: .delivered, environment: .sandbox).json().objectValue?["environment"],
            .string("Sandbox"), "a receipt's answer shows where Apple found it")
    }
}
