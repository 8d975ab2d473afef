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
        XCTAssertTrue(error?.problem.contains("loopback") ?? false, "the error says when http:// is allowed")
    }

    /// docs/events.md "Push: the webhook": `http://` to a loopback host (the game's PHP on the same machine).
    func testPlainHTTPToALoopbackHostIsAllowed() throws {
        for url in [
            "http://127.0.0.1/iap/events", "http://127.1.2.3:9000/hook", "http://[::1]:8080/x", "http://localhost",
            "http://localhost:8080/events?x=1", "HTTP://LOCALHOST/x", "Http://127.0.0.1:65535", "http://[::1]",
            "http://127.0.0.1?x", "http://127.0.0.1#x", "http://[::ffff:127.0.0.1]:80/x", "http://[0:0:0:0:0:0:0:1]/",
        ] {
            let webhook = try configuration(["IAP_WEBHOOK_URL": url, "IAP_WEBHOOK_SECRET": secret])
            XCTAssertEqual(webhook?.url, url, url)
        }
    }

    /// Any other host, or a URL some parser could read as another host, still needs https://.
    func testPlainHTTPToAnyOtherHostIsRefused() {
        for url in [
            "http://127.0.0.1.evil.com/", "http://localhost.evil.com", "http://localhost.evil.com:80/x",
            "http://user@127.0.0.1@evil.com", "http://user@127.0.0.1/", "http://127.0.0.1@evil.com/",
            "http://evil.com@127.0.0.1/", "http://evil.com#@127.0.0.1/", "http://10.0.0.1/hook", "http://128.0.0.1/",
            "http://[::2]/", "http://[::1/", "http://[::1]x/", "http://[127.0.0.1]/", "http://::1/", "http://[::1%25lo]/",
            "http://127.1/", "http://0x7f.0.0.1/", "http://2130706433/", "http://127.000.0.1/", "http://127.0.0.1:/x",
            "http://127.0.0.1:0/", "http://127.0.0.1:65536/", "http://127.0.0.1:80x/", "http://127.0.0.1 /",
            "http://127.0.0.1\\@evil.com/", "http://127.0.0.1\u{301}/", "http://", "http:///127.0.0.1/",
            "http://localhost./", "http://0.0.0.0/", "ftp://127.0.0.1/", "http:127.0.0.1/",
        ] {
            XCTAssertEqual(error(["IAP_WEBHOOK_URL": url, "IAP_WEBHOOK_SECRET": secret])?.variable, "IAP_WEBHOOK_URL", url)
        }
    }

    func testHTTPSNeedsNoLoopbackHost() throws {
        for url in ["https://game.example.com/events", "HTTPS://127.0.0.1.example.com/", "https://10.0.0.1:8443/x"] {
            XCTAssertEqual(try configuration(["IAP_WEBHOOK_URL": url, "IAP_WEBHOOK_SECRET": secret])?.url, url)
        }
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
