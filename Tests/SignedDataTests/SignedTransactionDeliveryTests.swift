import IAPCore
import SignedData
import XCTest

/// What the delivery code consumes from a signed transaction (`appleTransaction(raw:)`).
final class SignedTransactionDeliveryTests: XCTestCase {
    private func transaction(_ extra: String = "") throws -> (SignedTransaction, JSONObject) {
        let bytes = Array("""
            {"transactionId":"2000000000000001","originalTransactionId":"2000000000000000",\
            "bundleId":"com.example.game","productId":"gems","purchaseDate":1700000000000,"quantity":3,\
            "type":"Consumable","signedDate":1700000001000,"environment":"Production"\(extra)}
            """.utf8)
        let json = try JSONParser.parse(bytes).objectValue!
        return (try SignedTransaction(payload: bytes, json: json), json)
    }

    func testAPurchaseBecomesTheTransactionAReceiptWouldGive() throws {
        let (signed, json) = try transaction()
        let mapped = signed.appleTransaction(raw: json)
        XCTAssertEqual(mapped.transactionID, "2000000000000001")
        XCTAssertEqual(mapped.originalTransactionID, "2000000000000000")
        XCTAssertEqual(mapped.productID, "gems")
        XCTAssertEqual(mapped.quantity, 3)
        XCTAssertEqual(mapped.purchaseDateMs, 1_700_000_000_000)
        XCTAssertNil(mapped.cancellationDateMs)
        XCTAssertFalse(mapped.isRefunded)
        XCTAssertEqual(mapped.raw, json)
    }

    func testARevokedOneIsRefunded() throws {
        let (signed, json) = try transaction(#","revocationDate":1700000002000,"revocationReason":0"#)
        let mapped = signed.appleTransaction(raw: json)
        XCTAssertTrue(mapped.isRefunded)
        XCTAssertEqual(mapped.cancellationDateMs, 1_700_000_002_000)
        let delivered = ReceiptTransactions(inApp: [mapped], latestReceiptInfo: [], namedTransactionID: nil)
        XCTAssertEqual(delivered.transactions, [mapped])
        XCTAssertEqual(
            BatchPlan.joinable([BatchPlan.Member(receiptID: 1, userID: "u", orderID: nil, transactions: delivered)]) { _ in true },
            [false], "a refund never joins a batch: Delivery handles it one by one")
    }
}
