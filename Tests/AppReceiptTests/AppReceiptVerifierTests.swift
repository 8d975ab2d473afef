import AppReceipt
import IAPCore
import SignedData
import XCTest

/// AppReceiptVerifier against receipts made by an independent implementation
/// (Fixtures/make_fixtures.py): each encoding and algorithm accepted, each
/// check failing alone named by its case.
final class AppReceiptVerifierTests: XCTestCase {
    typealias Fixtures = AppReceiptFixtures

    private let verifier = AppReceiptVerifier(roots: Fixtures.testRoots)

    private func refusal(_ name: String, file: StaticString = #filePath, line: UInt = #line) -> AppReceiptError? {
        do {
            _ = try verifier.verify(Fixtures.receipt(name))
            XCTFail("\(name) was accepted", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testEveryEncodingAndAlgorithmReadsTheSameReceipt() throws {
        let expected = try verifier.verify(Fixtures.receipt("production-sha256"))
        XCTAssertEqual(expected.environment, .production)
        XCTAssertEqual(expected.payload.bundleID, "com.example.game")
        XCTAssertEqual(expected.payload.applicationVersion, "42")
        XCTAssertEqual(expected.payload.creationDateMs, 1_735_776_000_000)  // 2025-01-02T00:00:00Z
        for name in ["production-sha1", "production-ber", "signed-attributes"] {
            let read = try verifier.verify(Fixtures.receipt(name))
            XCTAssertEqual(read.payload.purchases, expected.payload.purchases, name)
            XCTAssertEqual(read.payload.bundleID, expected.payload.bundleID, name)
        }
    }

    func testThePayloadBecomesWhatVerifyReceiptWouldHaveAnswered() throws {
        let verified = try verifier.verify(Fixtures.receipt("production-sha256"))
        XCTAssertEqual(verified.reply.status, 0)
        XCTAssertEqual(verified.reply.environment, "Production")
        let receipt = verified.receipt
        XCTAssertEqual(receipt.format, .appReceipt)
        XCTAssertEqual(receipt.bundleID, "com.example.game")
        XCTAssertEqual(receipt.applicationVersion, "42")
        XCTAssertEqual(receipt.appItemID, .number("1234567890"))
        XCTAssertEqual(receipt.inApp.count, 1)
        let purchase = receipt.inApp[0]
        XCTAssertEqual(purchase.transactionID, "1000000100000000")
        XCTAssertEqual(purchase.originalTransactionID, "1000000100000000")
        XCTAssertEqual(purchase.productID, "com.example.game.coins100")
        XCTAssertEqual(purchase.quantity, 1)
        XCTAssertEqual(purchase.purchaseDateMs, 1_735_689_600_000)
        XCTAssertFalse(purchase.isRefunded)
        XCTAssertEqual(purchase.raw["purchase_date"], .string("2025-01-01 00:00:00 Etc/GMT"))
        XCTAssertNil(purchase.raw["expires_date"], "an empty date is no date")
        XCTAssertNil(purchase.raw["web_order_line_item_id"], "0 is none")
    }

    func testACancellationDateIsARefund() throws {
        let purchase = try verifier.verify(Fixtures.receipt("refunded")).receipt.inApp[0]
        XCTAssertTrue(purchase.isRefunded)
        XCTAssertEqual(purchase.cancellationDateMs, 1_736_035_200_000)  // 2025-01-05
    }

    func testProductionSandboxIsReadAsSandbox() throws {
        let verified = try verifier.verify(Fixtures.receipt("sandbox"))
        XCTAssertEqual(verified.environment, .sandbox)
        XCTAssertEqual(verified.reply.environment, "Sandbox")
        XCTAssertEqual(verified.payload.environmentName, "ProductionSandbox")
    }

    func testAnEmptyInAppAndTwoHundredPurchases() throws {
        XCTAssertEqual(try verifier.verify(Fixtures.receipt("empty-in-app")).receipt.inApp, [])
        let many = try verifier.verify(Fixtures.receipt("two-hundred-purchases")).receipt.inApp
        XCTAssertEqual(many.count, 200)
        XCTAssertEqual(Set(many.map(\.transactionID)).count, 200)
    }

    func testValidityIsCheckedAtTheCreationDateNotNow() throws {
        // The leaf expired in 2021; the receipt was made in 2020.
        XCTAssertEqual(try verifier.verify(Fixtures.receipt("leaf-expired-now")).payload.creationDateMs, 1_590_969_600_000)
        XCTAssertEqual(refusal("leaf-expired-at-creation"), .expiredAtCreationDate)
    }

    func testEachCheckFailingAloneIsNamed() {
        let cases: [(String, AppReceiptError)] = [
            ("bad-signature", .badSignature),
            ("wrong-root", .untrustedChain),
            ("leaf-without-marker", .missingMarkerOID),
            ("intermediate-without-marker", .missingMarkerOID),
            ("xcode-self-signed", .untrustedChain),
            ("xcode-environment", .unsupportedEnvironment),
            ("truncated", .malformed),
        ]
        for (name, expected) in cases {
            XCTAssertEqual(refusal(name), expected, name)
        }
    }

    func testApplesRootRefusesTheTestPKI() {
        let apple = AppReceiptVerifier()
        XCTAssertThrowsError(try apple.verify(Fixtures.receipt("production-sha256"))) {
            XCTAssertEqual($0 as? AppReceiptError, .untrustedChain)
        }
    }

    func testGarbageIsMalformed() {
        for bytes: [UInt8] in [[], [0x30], [0x30, 0x80], [0x04, 0x02, 0x01, 0x02], Array(repeating: 0x30, count: 200) + [0x80]] {
            XCTAssertThrowsError(try verifier.verify(bytes)) { XCTAssertEqual($0 as? AppReceiptError, .malformed) }
        }
    }

    func testAHugeLengthIsMalformedWithoutAllocating() {
        // SEQUENCE claiming 2^62 bytes: refused by the length check against the input.
        let bytes: [UInt8] = [0x30, 0x88, 0x40, 0, 0, 0, 0, 0, 0, 0, 0x06, 0x00]
        XCTAssertThrowsError(try verifier.verify(bytes)) { XCTAssertEqual($0 as? AppReceiptError, .malformed) }
    }

    func testDeepNestingIsRefusedByItsBound() {
        let depth = 10_000
        let bytes = Array(repeating: [UInt8]([0x30, 0x80]), count: depth).flatMap { $0 }
            + Array(repeating: [UInt8]([0x00, 0x00]), count: depth).flatMap { $0 }
        XCTAssertThrowsError(try verifier.verify(bytes)) { XCTAssertEqual($0 as? AppReceiptError, .nestedTooDeep) }
    }

    func testAChainIsValidatedOnceAndOnlyAfterItsSignatureChecked() throws {
        let fresh = AppReceiptVerifier(roots: Fixtures.testRoots)
        XCTAssertThrowsError(try fresh.verify(Fixtures.receipt("bad-signature")))
        XCTAssertEqual(fresh.cachedChainCount, 0, "a refused receipt leaves nothing behind")
        _ = try fresh.verify(Fixtures.receipt("production-sha256"))
        _ = try fresh.verify(Fixtures.receipt("sandbox"))
        _ = try fresh.verify(Fixtures.receipt("empty-in-app"))
        XCTAssertEqual(fresh.cachedChainCount, 1)
        XCTAssertEqual(fresh.pathValidationCount, 2, "the bad signature's validation, then one for the good leaf")
        // A cached chain still refuses a receipt its leaf did not sign, and one made after the leaf expired.
        XCTAssertThrowsError(try fresh.verify(Fixtures.receipt("bad-signature"))) {
            XCTAssertEqual($0 as? AppReceiptError, .badSignature)
        }
        _ = try fresh.verify(Fixtures.receipt("leaf-expired-now"))
        XCTAssertThrowsError(try fresh.verify(Fixtures.receipt("leaf-expired-at-creation"))) {
            XCTAssertEqual($0 as? AppReceiptError, .expiredAtCreationDate)
        }
    }

    func testInspectionKeepsWhatReadsOfARefusedReceipt() {
        let inspection = verifier.inspect(Fixtures.receipt("bad-signature"))
        XCTAssertEqual(inspection.certificates.count, 3)
        XCTAssertEqual(inspection.certificates[0].key, "RSA2048.PublicKey")
        XCTAssertTrue(inspection.certificates[0].subject.contains("Test Receipt Signing"))
        XCTAssertEqual(inspection.payload?.bundleID, "com.example.game")
        guard case .failure(.badSignature) = inspection.verdict else { return XCTFail("\(inspection.verdict)") }
    }

    func testCheckNamesAreStable() {
        XCTAssertEqual(AppReceiptError.allCases.map(\.rawValue), [
            "malformed", "unsupportedContent", "missingCertificate", "untrustedChain", "missingMarkerOID",
            "unsupportedSignature", "badSignature", "invalidPayload", "expiredAtCreationDate", "unsupportedEnvironment",
            "tooManyNodes", "tooManyPieces", "nestedTooDeep", "tooManyCertificates",
        ])
        // The same name as the JWS refusal of the same check, in the same audit column.
        for shared in ["malformed", "untrustedChain", "missingMarkerOID", "badSignature"] {
            XCTAssertNotNil(SignedDataError(rawValue: shared), shared)
        }
    }
}
