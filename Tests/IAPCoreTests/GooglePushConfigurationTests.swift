import XCTest

@testable import IAPCore

final class GooglePushConfigurationTests: XCTestCase {
    func testUnsetIsNotConfigured() throws {
        XCTAssertNil(try GooglePushConfiguration.fromEnvironment([:]))
    }

    func testAudienceAndAccountWithDefaultCerts() throws {
        let configuration = try XCTUnwrap(GooglePushConfiguration.fromEnvironment([
            "IAP_GOOGLE_PUSH_AUDIENCE": "https://iap.example.com/v1/notifications/google",
            "IAP_GOOGLE_PUSH_SERVICE_ACCOUNT": "push@game.iam.gserviceaccount.com",
        ]))
        XCTAssertEqual(configuration.certsURL, "https://www.googleapis.com/oauth2/v3/certs")
        XCTAssertEqual(configuration.serviceAccount, "push@game.iam.gserviceaccount.com")
    }

    func testOneWithoutTheOtherStopsTheStart() {
        XCTAssertThrowsError(try GooglePushConfiguration.fromEnvironment(["IAP_GOOGLE_PUSH_AUDIENCE": "x"])) {
            XCTAssertEqual(($0 as? ConfigurationError)?.variable, "IAP_GOOGLE_PUSH_SERVICE_ACCOUNT")
        }
    }

    func testPlainHTTPCertsAreRefused() {
        XCTAssertThrowsError(try GooglePushConfiguration.fromEnvironment([
            "IAP_GOOGLE_PUSH_AUDIENCE": "a", "IAP_GOOGLE_PUSH_SERVICE_ACCOUNT": "b",
            "IAP_GOOGLE_PUSH_CERTS_URL": "http://keys.example.com/certs",
        ])) { XCTAssertEqual(($0 as? ConfigurationError)?.variable, "IAP_GOOGLE_PUSH_CERTS_URL") }
    }
}
