import XCTest

@testable import IAPCore

final class GooglePlayConfigurationTests: XCTestCase {
    private func configuration(_ env: [String: String]) throws -> GooglePlayConfiguration {
        try ServiceConfiguration.fromEnvironment(env.merging(["IAP_BUNDLE_IDS": "com.example.game"]) { $1 }).googlePlay
    }

    private func error(_ env: [String: String]) -> ConfigurationError? {
        do {
            _ = try configuration(env)
            return nil
        } catch {
            return error as? ConfigurationError
        }
    }

    func testUnsetIsNotConfiguredWithGooglesHostAndDefaultBudget() throws {
        let config = try configuration([:])
        XCTAssertFalse(config.isConfigured)
        XCTAssertEqual(config.packages, [])
        XCTAssertEqual(config.baseURL, "https://androidpublisher.googleapis.com")
        XCTAssertEqual(config.timeoutMs, 15000)
    }

    func testPackagesKeyURLAndTimeoutAreRead() throws {
        let config = try configuration([
            "IAP_GOOGLE_PACKAGES": " com.example.game, ,com.example.other ",
            "IAP_GOOGLE_SERVICE_ACCOUNT_FILE": "/etc/iap-fcgi/google.json",
            "IAP_GOOGLE_API_URL": "https://127.0.0.1:9624/", "IAP_GOOGLE_TIMEOUT_MS": "2000",
        ])
        XCTAssertTrue(config.isConfigured)
        XCTAssertEqual(config.packages, ["com.example.game", "com.example.other"])
        XCTAssertEqual(config.serviceAccountFile, "/etc/iap-fcgi/google.json")
        XCTAssertEqual(config.baseURL, "https://127.0.0.1:9624")
        XCTAssertEqual(config.timeoutMs, 2000)
    }

    func testOneWithoutTheOtherIsRefusedNamingTheMissingOne() {
        XCTAssertEqual(
            error(["IAP_GOOGLE_PACKAGES": "com.example.game"])?.variable, "IAP_GOOGLE_SERVICE_ACCOUNT_FILE")
        XCTAssertEqual(error(["IAP_GOOGLE_SERVICE_ACCOUNT_FILE": "/k.json"])?.variable, "IAP_GOOGLE_PACKAGES")
    }

    func testBadValuesAreRefused() {
        let key = ["IAP_GOOGLE_SERVICE_ACCOUNT_FILE": "/k.json"]
        XCTAssertEqual(error(key.merging(["IAP_GOOGLE_PACKAGES": "com.example.game,9bad"]) { $1 })?.variable,
                       "IAP_GOOGLE_PACKAGES")
        XCTAssertEqual(error(["IAP_GOOGLE_API_URL": "http://example.com"])?.variable, "IAP_GOOGLE_API_URL")
        XCTAssertEqual(error(["IAP_GOOGLE_TIMEOUT_MS": "99"])?.variable, "IAP_GOOGLE_TIMEOUT_MS")
        XCTAssertEqual(error(["IAP_GOOGLE_TIMEOUT_MS": "120001"])?.variable, "IAP_GOOGLE_TIMEOUT_MS")
    }
}
