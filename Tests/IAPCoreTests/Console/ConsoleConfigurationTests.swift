import XCTest

@testable import IAPCore

final class ConsoleConfigurationTests: XCTestCase {
    private func console(_ env: [String: String]) throws(ConfigurationError) -> ConsoleConfiguration? {
        try ServiceConfiguration.fromEnvironment(
            ["IAP_BUNDLE_IDS": "com.example.game", "IAP_LISTEN": "/run/iap-fcgi.sock"].merging(env) { $1 }
        ).console
    }

    func testUnsetMeansNoConsole() throws {
        XCTAssertNil(try console([:]))
        XCTAssertNil(try console(["IAP_CONSOLE_LISTEN": ""]))
    }

    func testAddressesAndTimeoutsAreRead() throws {
        let config = try console(["IAP_CONSOLE_LISTEN": "/run/iap-console.sock"])
        XCTAssertEqual(config, ConsoleConfiguration(listen: .unix(path: "/run/iap-console.sock"), idleTimeoutSeconds: 1800, absoluteTimeoutSeconds: 43_200))
        let tcp = try console([
            "IAP_CONSOLE_LISTEN": "127.0.0.1:9100", "IAP_CONSOLE_IDLE_TIMEOUT_S": "60", "IAP_CONSOLE_ABSOLUTE_TIMEOUT_S": "120",
        ])
        XCTAssertEqual(tcp, ConsoleConfiguration(listen: .tcp(host: "127.0.0.1", port: 9100), idleTimeoutSeconds: 60, absoluteTimeoutSeconds: 120))
    }

    func testBadValuesNameTheirVariable() {
        for (variable, env) in [
            ("IAP_CONSOLE_LISTEN", ["IAP_CONSOLE_LISTEN": "9100"]),
            ("IAP_CONSOLE_LISTEN", ["IAP_CONSOLE_LISTEN": "/run/iap-fcgi.sock"]),  // the public listener's
            ("IAP_CONSOLE_IDLE_TIMEOUT_S", ["IAP_CONSOLE_LISTEN": "/run/c.sock", "IAP_CONSOLE_IDLE_TIMEOUT_S": "5"]),
            ("IAP_CONSOLE_ABSOLUTE_TIMEOUT_S", ["IAP_CONSOLE_LISTEN": "/run/c.sock", "IAP_CONSOLE_ABSOLUTE_TIMEOUT_S": "1e3"]),
            ("IAP_CONSOLE_ABSOLUTE_TIMEOUT_S",
             ["IAP_CONSOLE_LISTEN": "/run/c.sock", "IAP_CONSOLE_IDLE_TIMEOUT_S": "600", "IAP_CONSOLE_ABSOLUTE_TIMEOUT_S": "300"]),
        ] {
            XCTAssertThrowsError(try console(env), "\(env)") { error in
                XCTAssertEqual((error as? ConfigurationError)?.variable, variable)
            }
        }
    }
}
