@testable import IAPService
import IAPCore
import XCTest

/// Google Play's verify route before any call: unconfigured it has no verifier (503
/// `google_not_configured`), a key file that cannot be read stops the start, and its answers.
final class GooglePurchaseRouteTests: XCTestCase {
    private let unconfigured = ServiceConfiguration(bundleIDs: ["com.example.game"])

    func testWithoutPackagesAndKeyThereIsNoVerifierAndTheRouteAnswers503() throws {
        let apple = try AppleClient(endpoints: AppleEndpoints(unconfigured))
        XCTAssertNil(try GooglePurchaseVerifier.configured(
            configuration: unconfigured, settings: SettingsCache(), apple: apple,
            database: Database(configuration: unconfigured.database)))
        let response = Response.error(.googleNotConfigured)
        XCTAssertEqual(response.status, 503)
        XCTAssertEqual(response.outcome.errorCode, "google_not_configured")
        XCTAssertEqual(response.headers.first { $0.0 == "Retry-After" }?.1, "5")
    }

    func testAKeyFileThatCannotBeReadStopsTheStartNamingTheVariable() {
        let configuration = GooglePlayConfiguration(
            packages: ["com.example.game"], serviceAccountFile: "/nonexistent/google-service-account.json")
        XCTAssertThrowsError(try GooglePlayClient.account(configuration)) { error in
            XCTAssertEqual((error as? ConfigurationError)?.variable, "IAP_GOOGLE_SERVICE_ACCOUNT_FILE")
        }
    }

    func testTheAnswerIsTheVerifyShapeWithTheStore() throws {
        let response = Response.googleVerify(VerifyAnswer(status: .pending))
        XCTAssertEqual(response.status, 202)
        let body = try XCTUnwrap(try JSONParser.parse(response.body).objectValue)
        XCTAssertEqual(body["store"], .string("google_play"))
        XCTAssertEqual(body["status"], .string("pending"))
        XCTAssertEqual(body["apple_status"], .null)
    }

    func testATokenIsOnePathSegment() {
        XCTAssertEqual(GooglePlayClient.pathSegment("abc.DEF-1_2~"), "abc.DEF-1_2~")
        XCTAssertEqual(GooglePlayClient.pathSegment("a/b?c%d e"), "a%2Fb%3Fc%25d%20e")
    }
}
