import AppReceipt
import Foundation
import IAPCore
import XCTest

/// Receipts Apple (and Xcode) really signed, from public projects' test
/// fixtures (Fixtures/real/ORIGIN.md gives each one's repository, commit and
/// licence): the only proof that the reader handles what Apple signs, beside
/// the receipts this project makes itself. Checked against the shipped Apple
/// Inc. Root CA, each at its own creation date: every leaf here has expired
/// since, so a check against "now" would refuse all of them.
final class RealReceiptTests: XCTestCase {
    private let verifier = AppReceiptVerifier()  // Apple Inc. Root CA, compiled in

    private static func ms(_ iso: String) -> Int64 {
        Int64(ISO8601DateFormatter().date(from: iso)!.timeIntervalSince1970 * 1000)
    }

    func testAProductionReceiptSignedWithSHA256UnderTheG5Intermediate() throws {
        let verified = try verifier.verify(AppReceiptFixtures.realReceipt("tpinappreceipt-production"))
        XCTAssertEqual(verified.environment, .production)
        XCTAssertEqual(verified.payload.environmentName, "Production")
        XCTAssertEqual(verified.payload.bundleID, "org.getpure.pure-iphone")
        XCTAssertEqual(verified.payload.applicationVersion, "15741")
        XCTAssertEqual(verified.payload.creationDateMs, Self.ms("2024-02-23T17:27:16Z"))
        let purchases = verified.receipt.inApp
        XCTAssertEqual(purchases.map(\.productID),
                       ["org.getpure.pure.Week", "org.getpure.pure.Month", "org.getpure.pure.Month", "org.getpure.pure.Month"])
        XCTAssertEqual(purchases[0].transactionID, "340001196262039")
        XCTAssertEqual(Set(purchases.map(\.originalTransactionID)), ["340001196262039"])
        XCTAssertEqual(Set(purchases.map(\.transactionID)).count, 4)
        XCTAssertTrue(purchases.allSatisfy { !$0.isRefunded })
    }

    func testAProductionSandboxReceiptFrom2025IsASandboxOne() throws {
        let verified = try verifier.verify(AppReceiptFixtures.realReceipt("tpinappreceipt-sandbox-g5"))
        XCTAssertEqual(verified.payload.environmentName, "ProductionSandbox")
        XCTAssertEqual(verified.environment, .sandbox)
        XCTAssertEqual(verified.reply.environment, "Sandbox")
        XCTAssertEqual(verified.payload.bundleID, "dev.bonzer.weeka.app")
        XCTAssertEqual(verified.payload.creationDateMs, Self.ms("2025-12-26T18:39:47Z"))
        XCTAssertEqual(verified.receipt.inApp.map(\.transactionID), ["2000001092134138", "2000001092148094"])
        XCTAssertEqual(Set(verified.receipt.inApp.map(\.productID)), ["dev.bonzer.weeka.app.subscription.pro.annual"])
    }

    func testASandboxReceiptFrom2015SignedWithSHA1UnderTheFirstWWDRIntermediate() throws {
        let verified = try verifier.verify(AppReceiptFixtures.realReceipt("kvitto-sandbox"))
        XCTAssertEqual(verified.environment, .sandbox)
        XCTAssertEqual(verified.payload.bundleID, "com.cocoanetics.EmmiView")
        XCTAssertEqual(verified.payload.applicationVersion, "246")
        XCTAssertEqual(verified.payload.creationDateMs, Self.ms("2015-05-25T15:22:10Z"))
        XCTAssertEqual(verified.receipt.inApp.count, 6)
        XCTAssertEqual(Set(verified.receipt.inApp.map(\.productID)), ["com.cocoanetics.EmmiView.OneMonth"])
        XCTAssertEqual(Set(verified.receipt.inApp.map(\.originalTransactionID)), ["1000000156444989"])
    }

    /// Every real chain's leaf has expired, so each verdict above rests on the
    /// creation date: the chain's own validity does not contain now.
    func testEveryRealLeafHasExpiredSince() throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for name in ["tpinappreceipt-production", "tpinappreceipt-sandbox-g5", "kvitto-sandbox"] {
            let inspection = verifier.inspect(try AppReceiptFixtures.realReceipt(name))
            let leaf = try XCTUnwrap(inspection.certificates.first { $0.subject.contains("Receipt Signing") }, name)
            XCTAssertLessThan(leaf.notValidAfterMs, now, "\(name)'s leaf")
            XCTAssertNotNil(try? inspection.verdict.get(), name)
        }
    }

    /// Xcode's StoreKit testing: BER with indefinite lengths, read whole, and
    /// refused, for its one self-signed certificate is no chain to Apple's root.
    func testXcodesBERReceiptReadsAndIsRefusedForItsSelfSignedCertificate() throws {
        let inspection = verifier.inspect(try AppReceiptFixtures.realReceipt("tpinappreceipt-xcode-with-purchases"))
        XCTAssertEqual(inspection.verdict, .failure(.untrustedChain))
        XCTAssertEqual(inspection.certificates.map(\.subject),
                       ["E=StoreKit,C=US,OU=StoreKit,O=StoreKit,CN=StoreKit"])
        let payload = try XCTUnwrap(inspection.payload, "the BER payload did not read")
        XCTAssertEqual(payload.environmentName, "Xcode")
        XCTAssertEqual(payload.bundleID, "com.example.naturelab.backyardbirds.example")
        XCTAssertEqual(payload.creationDateMs, Self.ms("2023-10-19T01:45:40Z"))
        XCTAssertEqual(payload.purchases.map(\.productID), ["pass.premium"])
    }

    /// A real receipt with one byte of its signed content changed: the chain
    /// still checks, the signature does not.
    func testARealReceiptWithOneContentByteChangedIsABadSignature() throws {
        var receipt = try AppReceiptFixtures.realReceipt("tpinappreceipt-production")
        let bundle = Array("org.getpure.pure-iphone".utf8)
        let at = try XCTUnwrap(receipt.firstRange(of: bundle)).lowerBound
        receipt[at] ^= 0x01  // "nrg.getpure…": still a valid UTF8String
        XCTAssertThrowsError(try verifier.verify(receipt)) {
            XCTAssertEqual($0 as? AppReceiptError, .badSignature)
        }
    }
}
