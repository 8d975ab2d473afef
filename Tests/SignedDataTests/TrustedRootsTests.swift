import Crypto
import IAPCore
import SignedData
import XCTest

final class TrustedRootsTests: XCTestCase {
    /// The compiled-in root is Apple Root CA - G3 and no other certificate.
    func testShippedRootIsAppleRootCAG3() throws {
        let roots = TrustedRoots.apple
        XCTAssertEqual(roots.certificates.count, 1)
        let base64 = AppleRootCA.g3PEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try XCTUnwrap(Base64.decode(base64))
        XCTAssertEqual(SHA256.hexDigest(der), "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179")
        XCTAssertEqual(roots.certificates[0].subject.description,
                       "C=US,O=Apple Inc.,OU=Apple Certification Authority,CN=Apple Root CA - G3")
    }

    func testAPEMMayHoldSeveralRoots() throws {
        let pem = AppleRootCA.g3PEM + SignedDataFixtures.testRootPEM + "\n" + SignedDataFixtures.untrustedRootPEM
        XCTAssertEqual(try TrustedRoots(pem: pem).certificates.count, 3)
    }

    func testNoCertificateOrABrokenOneIsRefused() {
        XCTAssertThrowsError(try TrustedRoots(pem: "")) { XCTAssertEqual($0 as? TrustedRootsError, .noCertificate) }
        XCTAssertThrowsError(try TrustedRoots(pem: "not a pem")) {
            XCTAssertEqual($0 as? TrustedRootsError, .noCertificate)
        }
        XCTAssertThrowsError(try TrustedRoots(pem: "-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----\n")) {
            XCTAssertEqual($0 as? TrustedRootsError, .notPEM)
        }
        let broken = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
        XCTAssertThrowsError(try TrustedRoots(pem: AppleRootCA.g3PEM + broken)) {
            XCTAssertEqual($0 as? TrustedRootsError, .badCertificate(index: 1))
        }
    }
}
