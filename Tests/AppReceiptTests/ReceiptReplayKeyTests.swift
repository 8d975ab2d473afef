import Crypto
import Foundation
import IAPCore
import XCTest

/// The replay short-cut's key (`ReceiptReplayKey`): what an app receipt's
/// signature covers, the same for every encoding of the certificate set around
/// it; the bytes' SHA-256 for anything else.
final class ReceiptReplayKeyTests: XCTestCase {
    private let genuine = AppReceiptFixtures.receipt("production-sha256")

    func testAReceiptReencodedAroundItsSignatureHasTheSameKey() throws {
        let key = ReceiptReplayKey.hex(of: genuine)
        XCTAssertEqual(key.count, 64)
        XCTAssertNotEqual(key, SHA256.hexDigest(genuine), "an app receipt is keyed by its signed content")
        for (name, copy) in [
            ("certificates twice", CraftedReceipts.certificateCopies(genuine, copies: 2)),
            ("leaf only", CraftedReceipts.firstCertificateOnly(genuine)),
        ] {
            XCTAssertNotEqual(copy, genuine, name)
            XCTAssertEqual(ReceiptReplayKey.hex(of: copy), key, name)
        }
        for name in ["tpinappreceipt-production", "kvitto-sandbox"] {
            let real = try AppReceiptFixtures.realReceipt(name)
            XCTAssertEqual(
                ReceiptReplayKey.hex(of: CraftedReceipts.certificateCopies(real, copies: 3)),
                ReceiptReplayKey.hex(of: real), name)
        }
    }

    func testAnotherPayloadOrSignatureIsAnotherKey() {
        let key = ReceiptReplayKey.hex(of: genuine)
        XCTAssertNotEqual(ReceiptReplayKey.hex(of: AppReceiptFixtures.receipt("sandbox")), key)
        var otherSignature = genuine
        otherSignature[otherSignature.count - 1] ^= 0x01  // the signature value ends the receipt
        XCTAssertNotEqual(ReceiptReplayKey.hex(of: otherSignature), key)
    }

    func testWhatIsNotAnAppReceiptInDERIsKeyedByItsBytes() throws {
        let transactionReceipt = Array(#"{"signature" = "AmFr"; "purchase-info" = "ewoJ"; }"#.utf8)
        for bytes in [
            transactionReceipt,
            AppReceiptFixtures.receipt("production-ber"),
            try AppReceiptFixtures.realReceipt("tpinappreceipt-xcode-with-purchases"),
            AppReceiptFixtures.receipt("truncated"),
            CraftedReceipts.emptyPieces(count: 10),
            CraftedReceipts.contentInOneBytePieces(genuine),
        ] {
            XCTAssertEqual(ReceiptReplayKey.hex(of: bytes), SHA256.hexDigest(bytes))
        }
    }

    func testReceiptDataCarriesTheKey() throws {
        let receipt = try ReceiptData.normalise(Data(genuine).base64EncodedString())
        XCTAssertEqual(receipt.replayKeyHex, ReceiptReplayKey.hex(of: genuine))
        XCTAssertEqual(receipt.sha256Hex, SHA256.hexDigest(genuine))
    }
}
