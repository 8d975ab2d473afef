import XCTest

@testable import IAPCore

/// `IAP_RECEIPT_VERIFIER` and `IAP_APPLE_RECEIPT_ROOT_FILE`.
final class ReceiptVerifierConfigurationTests: XCTestCase {
    private let minimal = ["IAP_BUNDLE_IDS": "com.example.game"]
    private let serverAPI = [
        "IAP_APPSTORE_KEY_ID": "TESTKEY123", "IAP_APPSTORE_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
        "IAP_APPSTORE_PRIVATE_KEY_FILE": "/etc/iap/key.p8",
    ]

    private func configuration(_ extra: [String: String]) throws(ConfigurationError) -> ServiceConfiguration {
        try ServiceConfiguration.fromEnvironment(minimal.merging(extra) { $1 })
    }

    func testAppleByDefaultWithTheCompiledInRoot() throws {
        let config = try configuration([:])
        XCTAssertEqual(config.receiptVerifier, .apple)
        XCTAssertNil(config.appleReceiptRootFile)
        XCTAssertEqual(try configuration(["IAP_RECEIPT_VERIFIER": ""]).receiptVerifier, .apple, "empty is unset")
    }

    func testEachModeIsRead() throws {
        XCTAssertEqual(try configuration(["IAP_RECEIPT_VERIFIER": "apple"]).receiptVerifier, .apple)
        XCTAssertEqual(try configuration(["IAP_RECEIPT_VERIFIER": "local"]).receiptVerifier, .local)
        let withAPI = serverAPI.merging(["IAP_RECEIPT_VERIFIER": "server-api"]) { $1 }
        XCTAssertEqual(try configuration(withAPI).receiptVerifier, .serverAPI)
        let config = try configuration(["IAP_APPLE_RECEIPT_ROOT_FILE": "/etc/iap/receipt-roots.pem"])
        XCTAssertEqual(config.appleReceiptRootFile, "/etc/iap/receipt-roots.pem")
    }

    func testAnUnknownModeStopsTheStartNamingTheChoices() {
        XCTAssertThrowsError(try configuration(["IAP_RECEIPT_VERIFIER": "Local"])) {
            XCTAssertEqual(
                ($0 as? ConfigurationError)?.description,
                "IAP_RECEIPT_VERIFIER: must be one of apple, local, server-api (got \"Local\")")
        }
    }

    func testServerAPIWithoutTheAPIStopsTheStart() {
        XCTAssertThrowsError(try configuration(["IAP_RECEIPT_VERIFIER": "server-api"])) {
            let error = $0 as? ConfigurationError
            XCTAssertEqual(error?.variable, "IAP_RECEIPT_VERIFIER")
            XCTAssertTrue(error?.problem.contains("IAP_APPSTORE_KEY_ID") ?? false, "\(String(describing: error))")
        }
    }
}
