import IAPCore
import XCTest

/// Helpers shared by the Apple, Delivery and VerifyAnswer tests.
enum AppleFixtures {
    /// Parses fixture text, failing the test (not crashing) when it is not JSON.
    static func json(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSONValue {
        do {
            return try JSONParser.parse(Array(text.utf8))
        } catch {
            XCTFail("fixture is not JSON: \(error)", file: file, line: line)
            return .null
        }
    }

    /// Parses fixture text as an answer of Apple, failing the test when it cannot.
    static func reply(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> AppleReply {
        do {
            return try AppleReply.parse(json(text, file: file, line: line))
        } catch {
            XCTFail("fixture is not an Apple answer: \(error)", file: file, line: line)
            return AppleReply(status: -1)
        }
    }

    /// A transaction made in a test, with only what the test cares about.
    static func transaction(
        _ id: String, product: String = "zydj.product.pay_6", cancelledAtMs: Int64? = nil
    ) -> AppleTransaction {
        AppleTransaction(
            transactionID: id, productID: product, purchaseDateMs: 1_406_193_061_000,
            cancellationDateMs: cancelledAtMs)
    }
}
