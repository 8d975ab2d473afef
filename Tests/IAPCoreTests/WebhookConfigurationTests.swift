import XCTest

@testable import IAPCore

final class WebhookConfigurationTests: XCTestCase {
    private let secret = "whsec-test-0123456789"

    private func configuration(_ env: [String: String]) throws(ConfigurationError) -> WebhookConfiguration? {
        try ServiceConfiguration.fromEnvironment(env.merging(["IAP_BUNDLE_IDS": "com.example.game"]) { $1 }).webhook
    }

    private func error(_ env: [String: String]) -> ConfigurationError? {
        do {
            _ = try configuration(env)
            return nil
        } catch {
            return error
        }
    }

    func testUnsetMeansNoPush() throws {
        XCTAssertNil(try configuration([:]))
        XCTAssertNil(try configuration(["IAP_WEBHOOK_URL": ""]))
    }

    func testTheURLAndTheSecretAreRead() throws {
        let webhook = try configuration([
            "IAP_WEBHOOK_URL": "https://game.example.com/events", "IAP_WEBHOOK_SECRET": secret,
        ])
        XCTAssertEqual(webhook, WebhookConfiguration(url: "https://game.example.com/events", secret: secret))
    }

    func testTheURLWithoutASecretStopsTheStart() {
        let error = error(["IAP_WEBHOOK_URL": "https://game.example.com/events"])
        XCTAssertEqual(error?.variable, "IAP_WEBHOOK_SECRET")
        XCTAssertTrue(error?.problem.contains("required") ?? false)
    }

    func testASecretWithoutTheURLStopsTheStart() {
        XCTAssertEqual(error(["IAP_WEBHOOK_SECRET": secret])?.variable, "IAP_WEBHOOK_URL")
    }

    func testAShortSecretIsRefusedWithoutQuotingIt() {
        let error = error(["IAP_WEBHOOK_URL": "https://game.example.com/events", "IAP_WEBHOOK_SECRET": "short-secret"])
        XCTAssertEqual(error?.variable, "IAP_WEBHOOK_SECRET")
        XCTAssertFalse(error?.description.contains("short-secret") ?? true)
    }

    func testPlainHTTPIsRefused() {
        let error = error(["IAP_WEBHOOK_URL": "http://game.example.com/events", "IAP_WEBHOOK_SECRET": secret])
        XCTAssertEqual(error?.variable, "IAP_WEBHOOK_URL")
    }

    func testTheSecretIsNeverShown() throws {
        let config = try ServiceConfiguration.fromEnvironment([
            "IAP_BUNDLE_IDS": "com.example.game", "IAP_WEBHOOK_URL": "https://game.example.com/events",
            "IAP_WEBHOOK_SECRET": secret,
        ])
        let mirrored = "\(Mirror(reflecting: config).children.map { $0.value })"
        for text in [config.description, config.debugDescription, String(reflecting: config), mirrored] {
            XCTAssertFalse(text.contains(secret), text)
        }
        XCTAssertTrue(config.description.contains("https://game.example.com/events"))
    }
}
