import IAPCore
import XCTest

final class DeliveryTransactionsTests: XCTestCase {
    private let madeUp = AppleFixtures.reply(MadeUpAnswers.threePurchasesOneRefundedWithLatestInfo)

    func testTakesEveryTransactionOnceInAppleOrder() {
        let receipt = ReceiptTransactions(reply: madeUp, namedTransactionID: nil)

        XCTAssertEqual(receipt.transactions.map(\.transactionID), [
            "1000000000000001", "1000000000000002", "1000000000000003", "1000000000000004", "1000000000000005",
        ])
        XCTAssertEqual(receipt.transactions.map(\.isRefunded), [false, false, false, true, false])
        XCTAssertNil(receipt.namedTransactionID)
        XCTAssertTrue(receipt.namedTransactionPresent)
    }

    func testFirstCopyWinsButAnyCancelledCopyMeansRefunded() {
        let first = AppleFixtures.transaction("7", product: "zydj.product.pay_40")
        let cancelledCopy = AppleTransaction(
            transactionID: "7", productID: "changed", quantity: 9, cancellationDateMs: 1_406_282_400_000)
        let receipt = ReceiptTransactions(
            inApp: [first, AppleFixtures.transaction("8")], latestReceiptInfo: [cancelledCopy, first],
            namedTransactionID: nil)

        XCTAssertEqual(receipt.transactions.map(\.transactionID), ["7", "8"])
        let seven = receipt.transactions[0]
        XCTAssertTrue(seven.isRefunded)
        XCTAssertEqual(seven.cancellationDateMs, 1_406_282_400_000)
        XCTAssertEqual(seven.productID, "zydj.product.pay_40")
        XCTAssertEqual(seven.quantity, 1)
        XCTAssertEqual(seven.purchaseDateMs, 1_406_193_061_000)
    }

    func testARefundIsNotUndoneByALaterCopy() {
        let refunded = AppleFixtures.transaction("7", cancelledAtMs: 1)
        let receipt = ReceiptTransactions(
            inApp: [refunded], latestReceiptInfo: [AppleFixtures.transaction("7")], namedTransactionID: nil)

        XCTAssertEqual(receipt.transactions, [refunded])
    }

    func testTheNamedTransactionComesFirst() {
        let receipt = ReceiptTransactions(reply: madeUp, namedTransactionID: "1000000000000003")

        XCTAssertEqual(receipt.transactions.map(\.transactionID), [
            "1000000000000003", "1000000000000001", "1000000000000002", "1000000000000004", "1000000000000005",
        ])
        XCTAssertTrue(receipt.namedTransactionPresent)
    }

    func testANamedTransactionOnlyInLatestReceiptInfoIsPresent() {
        let receipt = ReceiptTransactions(reply: madeUp, namedTransactionID: "1000000000000005")

        XCTAssertEqual(receipt.transactions.first?.transactionID, "1000000000000005")
        XCTAssertTrue(receipt.namedTransactionPresent)
    }

    func testANamedTransactionNotInTheReceiptIsAbsent() {
        let receipt = ReceiptTransactions(reply: madeUp, namedTransactionID: "1000000099999999")

        XCTAssertEqual(receipt.transactions.count, 5)
        XCTAssertEqual(receipt.namedTransactionID, "1000000099999999")
        XCTAssertFalse(receipt.namedTransactionPresent)
    }

    func testAnEmptyNamedTransactionIDNamesNone() {
        let receipt = ReceiptTransactions(reply: madeUp, namedTransactionID: "")

        XCTAssertNil(receipt.namedTransactionID)
        XCTAssertTrue(receipt.namedTransactionPresent)
    }

    func testReadsBothPurchasesOfSeed000NotOnlyTheFirstOrLast() {
        let receipt = ReceiptTransactions(
            reply: AppleFixtures.reply(SeedAnswers.ios7AppReceiptTwoPurchases), namedTransactionID: "1000000114938703")

        XCTAssertEqual(receipt.transactions.map(\.transactionID), ["1000000114938703", "1000000114795007"])
    }

    func testIOS6FlatReceiptIsOneTransaction() {
        let receipt = ReceiptTransactions(
            reply: AppleFixtures.reply(SeedAnswers.ios6TransactionReceipt), namedTransactionID: "1000000117879059")

        XCTAssertEqual(receipt.transactions.map(\.productID), ["com.netease.sdk.test.item2"])
        XCTAssertTrue(receipt.namedTransactionPresent)
    }

    func testEmptyInAppAndNoReceiptHaveNoTransactions() {
        XCTAssertEqual(ReceiptTransactions(reply: AppleFixtures.reply(MadeUpAnswers.emptyInApp), namedTransactionID: nil).transactions, [])
        XCTAssertEqual(ReceiptTransactions(reply: AppleReply(status: 0), namedTransactionID: nil).transactions, [])
    }

    func testAtMostTheMaximumCountIsHandledAndTheNamedOneIsAmongThem() {
        let many = (0...ReceiptTransactions.maximumCount).map {
            AppleTransaction(transactionID: String(1_000_000 + $0), productID: "p")
        }
        let named = many.last!.transactionID
        let transactions = ReceiptTransactions(inApp: many, latestReceiptInfo: [], namedTransactionID: named)
        XCTAssertEqual(transactions.transactions.count, ReceiptTransactions.maximumCount)
        XCTAssertEqual(transactions.transactions.first?.transactionID, named)
        XCTAssertTrue(transactions.namedTransactionPresent)
    }
}
