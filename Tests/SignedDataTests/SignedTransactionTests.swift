import IAPCore
import SignedData
import XCTest

final class SignedTransactionTests: XCTestCase {
    private func decode(_ json: String) throws -> SignedTransaction {
        let bytes = Array(json.utf8)
        return try SignedTransaction(payload: bytes, json: JSONParser.parse(bytes).objectValue!)
    }

    private let minimal = """
        "transactionId":"2000000000000001","originalTransactionId":"2000000000000000",\
        "bundleId":"com.example.game","productId":"gems","purchaseDate":1700000000000,"quantity":2,\
        "type":"Consumable","signedDate":1700000001000,"environment":"Sandbox"
        """

    func testEveryNamedFieldIsRead() throws {
        let transaction = try decode("""
            {\(minimal),"appAccountToken":"6f9619ff-8b86-4d01-b42d-00c04fc964ff","inAppOwnershipType":"PURCHASED",\
            "storefront":"FRA","price":1990,"currency":"EUR","revocationDate":1700000002000,"revocationReason":1,\
            "revocationType":"REFUND_PRORATED","revocationPercentage":50000}
            """)
        XCTAssertEqual(transaction.transactionID, "2000000000000001")
        XCTAssertEqual(transaction.originalTransactionID, "2000000000000000")
        XCTAssertEqual(transaction.purchaseDate, 1_700_000_000_000)
        XCTAssertEqual(transaction.quantity, 2)
        XCTAssertEqual(transaction.signedDate, 1_700_000_001_000)
        XCTAssertEqual(transaction.environment, "Sandbox")
        XCTAssertEqual(transaction.appAccountToken, "6f9619ff-8b86-4d01-b42d-00c04fc964ff")
        XCTAssertEqual(transaction.inAppOwnershipType, "PURCHASED")
        XCTAssertEqual(transaction.storefront, "FRA")
        XCTAssertEqual(transaction.price, 1990)
        XCTAssertEqual(transaction.currency, "EUR")
        XCTAssertEqual(transaction.revocationDate, 1_700_000_002_000)
        XCTAssertEqual(transaction.revocationReason, 1)
        XCTAssertEqual(transaction.revocationType, "REFUND_PRORATED")
        XCTAssertEqual(transaction.revocationPercentage, 50000)
    }

    func testOptionalFieldsMayBeAbsentOrNullAndUnknownOnesAreKept() throws {
        let json = "{\(minimal),\"appAccountToken\":null,\"offerDiscountType\":\"FREE_TRIAL\",\"future\":{\"a\":[1]}}"
        let transaction = try decode(json)
        XCTAssertNil(transaction.appAccountToken)
        XCTAssertNil(transaction.price)
        XCTAssertNil(transaction.revocationDate)
        XCTAssertEqual(transaction.payload, Array(json.utf8))
    }

    func testAMissingOrMistypedFieldIsInvalid() {
        for json in [
            "{\(minimal.replacingOccurrences(of: "\"productId\":\"gems\",", with: ""))}",
            "{\(minimal.replacingOccurrences(of: "\"quantity\":2", with: "\"quantity\":\"2\""))}",
            "{\(minimal.replacingOccurrences(of: "1700000000000", with: "1.7e12"))}",
            "{\(minimal),\"price\":\"990\"}",
            "{\(minimal),\"revocationReason\":99999999999999999999}",
        ] {
            XCTAssertThrowsError(try decode(json), json) { XCTAssertEqual($0 as? SignedDataError, .invalidPayload) }
        }
    }
}
