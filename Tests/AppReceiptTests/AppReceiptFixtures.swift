import Foundation
import SignedData
import XCTest

/// The receipts made by Fixtures/make_fixtures.py (Python's cryptography and a
/// DER/BER writer of its own, the test PKI shaped like Apple's): one good
/// receipt in each encoding and algorithm, and each check failing alone.
enum AppReceiptFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static func receipt(_ name: String) -> [UInt8] {
        Array(FileManager.default.contents(atPath: directory.appendingPathComponent(name + ".der").path)!)
    }

    /// A receipt Apple or Xcode signed, from Fixtures/real (ORIGIN.md): its base64 decoded.
    static func realReceipt(_ name: String) throws -> [UInt8] {
        let url = directory.appendingPathComponent("real/\(name).b64")
        let text = try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return try XCTUnwrap(Data(base64Encoded: text).map(Array.init), "\(name).b64 is not base64")
    }

    /// The test root the good receipts chain to.
    static let testRoots = try! TrustedRoots(pemFile: directory.appendingPathComponent("root.pem").path)
}
