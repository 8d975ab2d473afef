@testable import AppReceipt
import IAPCore
import Foundation
import X509
import XCTest

/// The DER outline of a receipt (`SignedDataOutline`) finds what swift-asn1's
/// parse of the whole receipt finds, and declines what is not definite-length
/// DER, which is then parsed whole.
final class SignedDataOutlineTests: XCTestCase {
    func testApplesDERReceiptsHaveAnOutlineWithTheirCertificates() throws {
        for name in ["tpinappreceipt-production", "tpinappreceipt-sandbox-g5", "kvitto-sandbox"] {
            let receipt = try AppReceiptFixtures.realReceipt(name)
            let outline = try XCTUnwrap(SignedDataOutline(receipt), name)
            XCTAssertEqual(outline.certificates.count, 3, name)
            for certificate in outline.certificates {
                XCTAssertNoThrow(try Certificate(derEncoded: certificate), name)
            }
            let signedData = try PKCS7SignedData(berEncoded: receipt)
            XCTAssertEqual(signedData.certificates, outline.certificates, name)
            XCTAssertEqual(try AppReceiptPayload(berEncoded: signedData.content).bundleID.isEmpty, false, name)
        }
        XCTAssertNotNil(SignedDataOutline(AppReceiptFixtures.receipt("production-sha256")))
    }

    func testBERAndBrokenBytesHaveNoneAndAreParsedWholeAsBefore() throws {
        XCTAssertNil(SignedDataOutline(try AppReceiptFixtures.realReceipt("tpinappreceipt-xcode-with-purchases")), "indefinite lengths")
        XCTAssertNil(SignedDataOutline(AppReceiptFixtures.receipt("production-ber")))
        // Read whole, the BER receipt gives the same payload as its DER twin.
        let ber = try PKCS7SignedData(berEncoded: AppReceiptFixtures.receipt("production-ber"))
        let der = try PKCS7SignedData(berEncoded: AppReceiptFixtures.receipt("production-sha256"))
        XCTAssertEqual(try AppReceiptPayload(berEncoded: ber.content), try AppReceiptPayload(berEncoded: der.content))
        XCTAssertEqual(ber.certificates, der.certificates)

        let good = AppReceiptFixtures.receipt("production-sha256")
        XCTAssertNil(SignedDataOutline(Array(good.dropLast())), "truncated")
        XCTAssertNil(SignedDataOutline(good + [0x00]), "bytes left over")
        XCTAssertNil(SignedDataOutline([]))
        XCTAssertNil(SignedDataOutline([0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF]), "a length beyond the input")
        XCTAssertNil(SignedDataOutline([0x30, 0x85, 1, 2, 3, 4, 5]), "a length of five bytes")
        var otherType = good
        let oid: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
        let at = try XCTUnwrap(otherType.firstRange(of: oid)).upperBound - 1
        otherType[at] = 0x01  // data, not signedData
        XCTAssertNil(SignedDataOutline(otherType))
        XCTAssertThrowsError(try PKCS7SignedData(berEncoded: otherType)) {
            XCTAssertEqual($0 as? AppReceiptError, .malformed)
        }
    }
}
