import Foundation
import SignedData

/// The receipts made by Fixtures/make_fixtures.py (Python's cryptography and a
/// DER/BER writer of its own, the test PKI shaped like Apple's): one good
/// receipt in each encoding and algorithm, and each check failing alone.
enum AppReceiptFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static func receipt(_ name: String) -> [UInt8] {
        Array(FileManager.default.contents(atPath: directory.appendingPathComponent(name + ".der").path)!)
    }

    /// The test root the good receipts chain to.
    static let testRoots = try! TrustedRoots(pemFile: directory.appendingPathComponent("root.pem").path)
}
