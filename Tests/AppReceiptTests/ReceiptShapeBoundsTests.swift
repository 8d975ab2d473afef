import AppReceipt
import Foundation
import XCTest

/// Receipts crafted to cost their parse far more than their bytes
/// (`CraftedReceipts`) are refused by the bound they exceed, before any of
/// them is parsed, and cheaply; genuine receipts, padded within the bounds,
/// are still accepted, from the chain their leaf cached.
final class ReceiptShapeBoundsTests: XCTestCase {
    typealias Fixtures = AppReceiptFixtures

    private let verifier = AppReceiptVerifier(roots: Fixtures.testRoots)

    private func refusal(_ receipt: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> AppReceiptError? {
        do {
            _ = try verifier.verify(receipt)
            XCTFail("accepted", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    private static func threadCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    func testHalfAMillionEmptyPiecesAreRefusedBeforeTheirParse() {
        let receipt = CraftedReceipts.emptyPieces(count: 524_000)
        XCTAssertLessThan(receipt.count, CraftedReceipts.bodyLimitBytes)
        let start = Self.threadCPUSeconds()
        XCTAssertEqual(refusal(receipt), .tooManyPieces)
        // Their parse took a quarter second in a release build; the refusal reads a few hundred headers.
        XCTAssertLessThan(Self.threadCPUSeconds() - start, 0.02)
    }

    func testAGenuineReceiptsContentInOneBytePiecesIsRefused() {
        // The same content, so the same signature: only the bound on pieces refuses it.
        XCTAssertEqual(refusal(CraftedReceipts.contentInOneBytePieces(Fixtures.receipt("two-hundred-purchases"))), .tooManyPieces)
    }

    func testAGenuineReceiptWithMoreCertificatesThanABoundIsRefused() {
        // 9 certificates: within the bound on nodes.
        XCTAssertEqual(refusal(CraftedReceipts.certificateCopies(Fixtures.receipt("production-sha256"), copies: 3)), .tooManyCertificates)
        // 824 copies: the walk stops at the node too many, before counting them.
        XCTAssertEqual(refusal(CraftedReceipts.certificateCopies(Fixtures.receipt("production-sha256"), copies: 275)), .tooManyNodes)
    }

    func testAGenuineReceiptWithThousandsOfNodesBesideItsSignatureIsRefused() {
        let receipt = CraftedReceipts.nulls(Fixtures.receipt("production-sha256"), count: 2_000)
        XCTAssertEqual(refusal(receipt), .tooManyNodes)
        XCTAssertEqual(refusal(CraftedReceipts.nulls(Fixtures.receipt("production-sha256"), count: 2_000, indefinite: true)), .tooManyNodes)
    }

    func testAGenuineReceiptNestedDeeperThanABoundIsRefused() {
        XCTAssertEqual(refusal(CraftedReceipts.nested(Fixtures.receipt("production-sha256"), depth: 20)), .nestedTooDeep)
    }

    func testGenuineReceiptsPaddedWithinTheBoundsAreAccepted() throws {
        let genuine = Fixtures.receipt("production-sha256")
        let expected = try verifier.verify(genuine).payload
        for padded in [
            CraftedReceipts.certificateCopies(genuine, copies: 2),
            CraftedReceipts.nulls(genuine, count: 500),
            CraftedReceipts.nulls(genuine, count: 500, indefinite: true),
            CraftedReceipts.nested(genuine, depth: 3),
        ] {
            XCTAssertEqual(try verifier.verify(padded).payload, expected)
        }
        for name in ["production-ber", "signed-attributes", "two-hundred-purchases", "sandbox"] {
            XCTAssertNoThrow(try verifier.verify(Fixtures.receipt(name)), name)
        }
        for name in ["tpinappreceipt-production", "tpinappreceipt-sandbox-g5", "kvitto-sandbox"] {
            XCTAssertNoThrow(try AppReceiptVerifier().verify(try Fixtures.realReceipt(name)), name)
        }
    }

    /// The chain is cached by the certificates the signature uses: a receipt
    /// padded with other certificates, or carrying them in another order,
    /// costs no path validation and adds no entry.
    func testAPaddedReceiptFindsTheChainItsLeafCached() throws {
        let fresh = AppReceiptVerifier(roots: Fixtures.testRoots)
        let genuine = Fixtures.receipt("production-sha256")
        _ = try fresh.verify(genuine)
        XCTAssertEqual(fresh.pathValidationCount, 1)
        for copies in 1...2 {
            _ = try fresh.verify(CraftedReceipts.certificateCopies(genuine, copies: copies))
        }
        _ = try fresh.verify(CraftedReceipts.nulls(genuine, count: 10))
        XCTAssertEqual(fresh.pathValidationCount, 1, "padding is no new chain")
        XCTAssertEqual(fresh.cachedChainCount, 1)
        // A cached leaf still needs its intermediate beside it, as a fresh validation does.
        XCTAssertEqual(try? fresh.verify(CraftedReceipts.firstCertificateOnly(genuine)), nil)
        XCTAssertEqual(fresh.cachedChainCount, 1)
    }

}
