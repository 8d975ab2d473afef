import XCTest

@testable import IAPCore

final class AppStoreServerAPIConfigurationTests: XCTestCase {
    private let credentials = [
        "IAP_APPSTORE_KEY_ID": "TESTKEY123", "IAP_APPSTORE_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
        "IAP_APPSTORE_PRIVATE_KEY_FILE": "/etc/iap/SubscriptionKey_TESTKEY123.p8",
    ]

    private func error(_ env: [String: String]) -> ConfigurationError? {
        do {
            _ = try ServiceConfiguration.fromEnvironment(env.merging(["IAP_BUNDLE_IDS": "com.example.game"]) { $1 })
            return nil
        } catch {
            return error
        }
    }

    func testDefaultsHaveNoCredentialsAndApplesHosts() throws {
        let config = try ServiceConfiguration.fromEnvironment(["IAP_BUNDLE_IDS": "com.example.game"]).appStore
        XCTAssertNil(config.credentials)
        XCTAssertEqual(config.baseURL(for: .production), "https://api.storekit.apple.com")
        XCTAssertEqual(config.baseURL(for: .sandbox), "https://api.storekit-sandbox.apple.com")
    }

    func testAllThreeAndTheURLsAreRead() throws {
        var env = credentials
        env["IAP_APPSTORE_API_URL"] = "https://127.0.0.1:9671/"
        env["IAP_APPSTORE_SANDBOX_API_URL"] = "https://127.0.0.1:9672"
        let config = try AppStoreServerAPIConfiguration.fromEnvironment(env)
        XCTAssertEqual(
            config.credentials,
            AppStoreCredentials(
                keyID: "TESTKEY123", issuerID: "57246542-96fe-1a63-e053-0824d011072a",
                privateKeyFile: "/etc/iap/SubscriptionKey_TESTKEY123.p8"))
        XCTAssertEqual(config.baseURL(for: .production), "https://127.0.0.1:9671")
        XCTAssertEqual(config.baseURL(for: .sandbox), "https://127.0.0.1:9672")
    }

    func testEachCredentialIsRequiredWithTheOthers() {
        for missing in credentials.keys {
            var env = credentials
            env[missing] = ""
            XCTAssertEqual(error(env)?.variable, missing, missing)
        }
        XCTAssertEqual(error(["IAP_APPSTORE_ISSUER_ID": "x"])?.variable, "IAP_APPSTORE_KEY_ID")
    }

    func testAKeyIDWithASpaceOrQuoteIsRefused() {
        XCTAssertEqual(error(credentials.merging(["IAP_APPSTORE_KEY_ID": "TEST KEY"]) { $1 })?.variable, "IAP_APPSTORE_KEY_ID")
        XCTAssertEqual(
            error(credentials.merging(["IAP_APPSTORE_ISSUER_ID": "a\"b"]) { $1 })?.variable, "IAP_APPSTORE_ISSUER_ID")
    }

    func testURLsMustBeHTTPS() {
        XCTAssertEqual(error(["IAP_APPSTORE_API_URL": "http://api.storekit.apple.com"])?.variable, "IAP_APPSTORE_API_URL")
        XCTAssertEqual(error(["IAP_APPSTORE_SANDBOX_API_URL": "ftp://x"])?.variable, "IAP_APPSTORE_SANDBOX_API_URL")
    }

    func testLookupsPerMinuteDefaultsTo600AndIsValidated() throws {
        let defaults = try ServiceConfiguration.fromEnvironment(["IAP_BUNDLE_IDS": "com.example.game"]).appStore
        XCTAssertEqual(defaults.lookupsPerMinute, 600)
        let set = try AppStoreServerAPIConfiguration.fromEnvironment(["IAP_APPSTORE_LOOKUPS_PER_MINUTE": "5"])
        XCTAssertEqual(set.lookupsPerMinute, 5)
        for bad in ["0", "-1", "100001", "ten", "6.5"] {
            let refused = error(["IAP_APPSTORE_LOOKUPS_PER_MINUTE": bad])
            XCTAssertEqual(refused?.variable, "IAP_APPSTORE_LOOKUPS_PER_MINUTE", bad)
            XCTAssertTrue(refused?.description.contains("IAP_APPSTORE_LOOKUPS_PER_MINUTE") ?? false, bad)
        }
    }
}
