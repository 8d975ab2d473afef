import IAPCore
import XCTest

final class AppleReplyTests: XCTestCase {
    func testReadsIOS6TransactionReceiptFromSeed000() throws {
        let reply = AppleFixtures.reply(SeedAnswers.ios6TransactionReceipt)

        XCTAssertEqual(reply.status, 0)
        XCTAssertNil(reply.environment)
        XCTAssertFalse(reply.isRetryable)
        let receipt = try XCTUnwrap(reply.receipt)
        XCTAssertEqual(receipt.format, .transactionReceipt)
        XCTAssertEqual(receipt.bundleID, "com.netease.sdk.test")
        XCTAssertEqual(receipt.applicationVersion, "1.0")
        XCTAssertEqual(receipt.appItemID, .string("892617314"))
        XCTAssertEqual(receipt.inApp.count, 1)
        let transaction = receipt.inApp[0]
        XCTAssertEqual(transaction.transactionID, "1000000117879059")
        XCTAssertEqual(transaction.originalTransactionID, "1000000117879059")
        XCTAssertEqual(transaction.productID, "com.netease.sdk.test.item2")
        XCTAssertEqual(transaction.quantity, 1)
        XCTAssertEqual(transaction.purchaseDateMs, 1_406_187_794_660)
        XCTAssertNil(transaction.cancellationDateMs)
        XCTAssertFalse(transaction.isRefunded)
        XCTAssertEqual(transaction.raw["unique_identifier"], .string("0000b0196818"))
    }

    func testReadsIOS7AppReceiptFromSeed000() throws {
        let reply = AppleFixtures.reply(SeedAnswers.ios7AppReceiptOnePurchase)

        XCTAssertEqual(reply.status, 0)
        XCTAssertEqual(reply.environment, "Sandbox")
        XCTAssertEqual(reply.latestReceiptInfo, [])
        let receipt = try XCTUnwrap(reply.receipt)
        XCTAssertEqual(receipt.format, .appReceipt)
        XCTAssertEqual(receipt.bundleID, "com.netease.sdk.test")
        XCTAssertEqual(receipt.applicationVersion, "1.0")
        XCTAssertNil(receipt.appItemID, "sandbox receipts carry no app_item_id")
        XCTAssertEqual(receipt.raw["receipt_type"], .string("ProductionSandbox"))
        XCTAssertEqual(receipt.inApp.map(\.transactionID), ["1000000117894869"])
        XCTAssertEqual(receipt.inApp[0].productID, "com.netease.sdk.test.item2")
        XCTAssertEqual(receipt.inApp[0].purchaseDateMs, 1_406_193_061_000)
        XCTAssertEqual(receipt.inApp[0].quantity, 1)
    }

    func testReadsEveryInAppEntryOfSeed000() throws {
        let receipt = try XCTUnwrap(AppleFixtures.reply(SeedAnswers.ios7AppReceiptTwoPurchases).receipt)

        XCTAssertEqual(receipt.inApp.map(\.transactionID), ["1000000114795007", "1000000114938703"])
        XCTAssertEqual(receipt.inApp.map(\.productID), ["com.netease.sdk.test.item1", "com.netease.sdk.test.item3"])
    }

    func testKeepsAppItemIDsAsAppleSentThemInSeed004() throws {
        let ios7 = try XCTUnwrap(AppleFixtures.reply(SeedAnswers.ios7AppReceiptWithAppItemID).receipt)
        XCTAssertEqual(ios7.appItemID, .string("0"))
        XCTAssertEqual(ios7.bundleID, "com.dianzhong.kuaikan")
        XCTAssertEqual(ios7.inApp.map(\.transactionID), ["1000000236789335"])

        let ios6 = try XCTUnwrap(AppleFixtures.reply(SeedAnswers.ios6TransactionReceiptWithItemID).receipt)
        XCTAssertEqual(ios6.format, .transactionReceipt)
        XCTAssertEqual(ios6.appItemID, .string("1140823223"))
        XCTAssertEqual(ios6.inApp.map(\.productID), ["com.dianzhong.kuaikan12"])

        let madeUp = try XCTUnwrap(AppleFixtures.reply(MadeUpAnswers.threePurchasesOneRefundedWithLatestInfo).receipt)
        XCTAssertEqual(madeUp.appItemID, .number("1234567890"))
    }

    func testReadsStatusOnlyAnswer() {
        let reply = AppleFixtures.reply(SeedAnswers.sandboxReceiptSentToProduction)

        XCTAssertEqual(reply.status, 21007)
        XCTAssertEqual(reply.appleStatus, .sandboxReceiptSentToProduction)
        XCTAssertNil(reply.receipt)
        XCTAssertNil(reply.environment)
        XCTAssertEqual(reply.latestReceiptInfo, [])
        XCTAssertEqual(reply.raw, JSONObject([(key: "status", value: .number("21007"))]))
    }

    func testToleratesStatusWrittenAsString() {
        XCTAssertEqual(AppleFixtures.reply(#"{"status": "21007"}"#).status, 21007)
        XCTAssertEqual(AppleFixtures.reply(#"{"status": " 0 "}"#).status, 0)
    }

    func testReadsBothSpellingsOfIsRetryable() {
        let retryable = [
            #"{"status": 21100, "is-retryable": true}"#,
            #"{"status": 21100, "is_retryable": true}"#,
            #"{"status": 21100, "is-retryable": "true"}"#,
            #"{"status": 21100, "is_retryable": "1"}"#,
            #"{"status": 21100, "is_retryable": 1}"#,
            #"{"status": 21100, "is-retryable": "TRUE"}"#,
        ]
        for text in retryable {
            XCTAssertTrue(AppleFixtures.reply(text).isRetryable, text)
        }
        let notRetryable = [
            #"{"status": 21100}"#,
            #"{"status": 21100, "is-retryable": false}"#,
            #"{"status": 21100, "is_retryable": "false"}"#,
            #"{"status": 21100, "is_retryable": "0"}"#,
            #"{"status": 21100, "is-retryable": null}"#,
        ]
        for text in notRetryable {
            XCTAssertFalse(AppleFixtures.reply(text).isRetryable, text)
        }
    }

    func testReadsMadeUpAnswerWithRefundAndLatestReceiptInfo() throws {
        let reply = AppleFixtures.reply(MadeUpAnswers.threePurchasesOneRefundedWithLatestInfo)
        let inApp = try XCTUnwrap(reply.receipt).inApp

        XCTAssertEqual(inApp.count, 4)
        XCTAssertEqual(reply.latestReceiptInfo.count, 3)
        // A number where Apple usually writes a string.
        XCTAssertEqual(inApp[1].quantity, 2)
        XCTAssertEqual(inApp[1].transactionID, "1000000000000002")
        // No original_transaction_id: the transaction's own.
        XCTAssertEqual(inApp[1].originalTransactionID, "1000000000000002")
        // No purchase_date_ms: read from purchase_date.
        XCTAssertEqual(inApp[1].purchaseDateMs, 1_406_193_120_000)
        XCTAssertEqual(inApp[2].purchaseDateMs, 1_406_193_200_000)
        XCTAssertEqual(inApp.map(\.isRefunded), [false, false, false, true])
        XCTAssertEqual(inApp[3].cancellationDateMs, 1_406_282_400_000)
        XCTAssertEqual(reply.raw["latest_receipt"], .string("AAAA"))
    }

    func testCancellationDateWithoutMillisecondsStillMeansRefunded() throws {
        let reply = AppleFixtures.reply(#"""
            {"status": 0, "receipt": {"bundle_id": "b", "in_app": [
              {"transaction_id": "1", "product_id": "p", "cancellation_date": "2014-07-25 10:00:00 Etc/GMT"},
              {"transaction_id": "2", "product_id": "p", "cancellation_date": "someday"}]}}
            """#)
        let inApp = try XCTUnwrap(reply.receipt).inApp

        XCTAssertEqual(inApp.map(\.isRefunded), [true, true])
        XCTAssertEqual(inApp[0].cancellationDateMs, 1_406_282_400_000)
        XCTAssertNil(inApp[1].cancellationDateMs)
        XCTAssertNil(inApp[0].purchaseDateMs)
    }

    func testReadsIOS6SubscriptionLatestReceiptInfoObject() {
        let reply = AppleFixtures.reply(#"""
            {"status": 21006, "receipt": {"bid": "b", "bvrs": "1", "transaction_id": "1", "product_id": "p"},
             "latest_receipt_info": {"bid": "b", "transaction_id": "2", "product_id": "p"}}
            """#)

        XCTAssertEqual(reply.latestReceiptInfo.map(\.transactionID), ["2"])
    }

    func testEmptyInAppIsAnAppReceiptWithoutTransactions() throws {
        let receipt = try XCTUnwrap(AppleFixtures.reply(MadeUpAnswers.emptyInApp).receipt)

        XCTAssertEqual(receipt.format, .appReceipt)
        XCTAssertEqual(receipt.inApp, [])
    }

    func testBrokenAnswersAreErrorsNamingTheField() {
        let cases: [(String, AppleReplyError)] = [
            (#"[0]"#, .notAnObject),
            (#"{}"#, AppleReplyError(.missingField, field: "status")),
            (#"{"status": null}"#, AppleReplyError(.missingField, field: "status")),
            (#"{"status": "ok"}"#, AppleReplyError(.invalidField, field: "status")),
            (#"{"status": 0, "receipt": "x"}"#, AppleReplyError(.invalidField, field: "receipt")),
            (#"{"status": 0, "receipt": {"bundle_id": "b", "in_app": {}}}"#,
             AppleReplyError(.invalidField, field: "receipt.in_app")),
            (#"{"status": 0, "receipt": {"bundle_id": "b", "in_app": ["x"]}}"#,
             AppleReplyError(.invalidField, field: "receipt.in_app[0]")),
            (#"{"status": 0, "receipt": {"bundle_id": "b", "in_app": [{"transaction_id": "1", "product_id": "p"}, {"product_id": "p"}]}}"#,
             AppleReplyError(.missingField, field: "receipt.in_app[1].transaction_id")),
            (#"{"status": 0, "receipt": {"bundle_id": "b", "in_app": [{"transaction_id": "1", "product_id": ""}]}}"#,
             AppleReplyError(.missingField, field: "receipt.in_app[0].product_id")),
            (#"{"status": 0, "receipt": {"bid": "b", "transaction_id": "1"}}"#,
             AppleReplyError(.missingField, field: "receipt.product_id")),
            (#"{"status": 0, "receipt": {"bundle_id": "b", "in_app": [{"transaction_id": "1", "product_id": "p", "quantity": "many"}]}}"#,
             AppleReplyError(.invalidField, field: "receipt.in_app[0].quantity")),
            (#"{"status": 0, "latest_receipt_info": [{"transaction_id": "1"}]}"#,
             AppleReplyError(.missingField, field: "latest_receipt_info[0].product_id")),
            (#"{"status": 0, "latest_receipt_info": "x"}"#,
             AppleReplyError(.invalidField, field: "latest_receipt_info")),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try AppleReply.parse(AppleFixtures.json(text)), text) { error in
                XCTAssertEqual(error as? AppleReplyError, expected, text)
            }
        }
    }

    func testErrorDescriptionNamesTheFieldNotItsValue() {
        let error = AppleReplyError(.missingField, field: "receipt.in_app[1].transaction_id")
        XCTAssertEqual(error.description, "Apple's answer has no receipt.in_app[1].transaction_id")
    }
}
