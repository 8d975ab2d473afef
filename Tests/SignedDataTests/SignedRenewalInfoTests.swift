import IAPCore
import SignedData
import XCTest

/// A notification's `signedRenewalInfo`, verified as a transaction is (Fixtures/regenerate signs it with
/// the test PKI from Python): decoded when the chain is trusted and the signature checks, refused
/// otherwise with the same reasons.
final class SignedRenewalInfoTests: XCTestCase {
    typealias Fixtures = SignedDataFixtures

    private let verifier = SignedDataVerifier(roots: try! TrustedRoots(pem: Fixtures.testRootPEM))

    private func assertRefused(
        _ jws: String, _ reason: SignedDataError, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try verifier.verifyRenewalInfo(Array(jws.utf8)), file: file, line: line) {
            XCTAssertEqual($0 as? SignedDataError, reason, file: file, line: line)
        }
    }

    func testGoodRenewalInfoVerifiesAndDecodes() throws {
        let jws = Fixtures.jws("renewal-good")
        let signed = try verifier.verifyRenewalInfo(Array(jws.utf8))
        XCTAssertEqual(signed.info.originalTransactionID, "2000000123456789")
        XCTAssertEqual(signed.info.productID, "com.example.game.vip")
        XCTAssertEqual(signed.info.autoRenewProductID, "com.example.game.vip.basic")
        XCTAssertEqual(signed.info.autoRenews, true)
        XCTAssertEqual(signed.info.gracePeriodExpiresDate, 1_767_225_600_000)
        XCTAssertEqual(signed.info.isInBillingRetryPeriod, true)
        XCTAssertEqual(signed.info.environment, "Production")
        XCTAssertEqual(signed.payload, Fixtures.payload(jws), "Apple's payload is kept byte for byte")
    }

    func testRenewalInfoUnderAnUntrustedRootIsRefused() {
        assertRefused(Fixtures.jws("renewal-untrusted"), .untrustedChain)
    }

    func testRenewalInfoChangedAfterSigningIsRefused() {
        let jws = Fixtures.jws("renewal-good")
        let text = String(decoding: Fixtures.payload(jws), as: UTF8.self)
        let changed = Array(text.replacingOccurrences(of: "\"autoRenewStatus\":1", with: "\"autoRenewStatus\":0").utf8)
        XCTAssertNotEqual(changed, Fixtures.payload(jws))
        assertRefused(Fixtures.replacingPayload(of: jws, with: changed), .badSignature)
    }

    func testAPayloadWithoutWhatTheChainNeedsIsInvalid() {
        let bytes = Array(#"{"signedDate":1700000000000,"environment":"Production"}"#.utf8)
        XCTAssertThrowsError(try SignedRenewalInfo(payload: bytes, json: JSONParser.parse(bytes).objectValue!)) {
            XCTAssertEqual($0 as? SignedDataError, .invalidPayload)
        }
    }

    func testRenewalInfoAndTransactionsShareTheVerifiedChain() throws {
        _ = try verifier.verifyTransaction(Array(Fixtures.jws("good").utf8))
        _ = try verifier.verifyRenewalInfo(Array(Fixtures.jws("renewal-good").utf8))
        XCTAssertEqual(verifier.pathValidationCount, 1, "one leaf signs both: its chain is validated once")
    }
}
