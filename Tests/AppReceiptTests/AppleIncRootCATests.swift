import AppReceipt
import Crypto
import IAPCore
import SignedData
import XCTest

final class AppleIncRootCATests: XCTestCase {
    func testTheShippedRootIsAppleIncRootCA() throws {
        let roots = TrustedRoots.appleReceipts
        XCTAssertEqual(roots.certificates.count, 1)
        let base64 = AppleIncRootCA.pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try XCTUnwrap(Base64.decode(base64))
        // docs/apple.md: B0:B1:73:0E:CB:C7:FF:45:05:14:2C:49:F1:29:5E:6E:DA:6B:CA:ED:7E:2C:68:C5:BE:91:B5:A1:10:01:F0:24
        XCTAssertEqual(SHA256.hexDigest(der), "b0b1730ecbc7ff4505142c49f1295e6eda6bcaed7e2c68c5be91b5a11001f024")
        XCTAssertEqual(roots.certificates[0].subject.description,
                       "CN=Apple Root CA,OU=Apple Certification Authority,O=Apple Inc.,C=US")
    }
}
