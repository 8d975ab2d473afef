import XCTest

@testable import IAPCore

final class OperationsConfigurationTests: XCTestCase {
    private func operations(_ env: [String: String]) throws(ConfigurationError) -> OperationsConfiguration {
        try ServiceConfiguration.fromEnvironment(["IAP_BUNDLE_IDS": "com.example.game"].merging(env) { $1 }).operations
    }

    func testDefaultsAreNoListenerAndTextLogs() throws {
        let config = try operations([:])
        XCTAssertNil(config.metricsListen)
        XCTAssertEqual(config.logFormat, .text)
        XCTAssertEqual(try operations(["IAP_METRICS_LISTEN": "", "IAP_LOG_FORMAT": ""]), config, "empty counts as unset")
    }

    func testListenerAndJSONAreRead() throws {
        let config = try operations(["IAP_METRICS_LISTEN": "127.0.0.1:9464", "IAP_LOG_FORMAT": "json"])
        XCTAssertEqual(config.metricsListen, .tcp(host: "127.0.0.1", port: 9464))
        XCTAssertEqual(config.logFormat, .json)
        XCTAssertEqual(try operations(["IAP_METRICS_LISTEN": "[::1]:9464"]).metricsListen, .tcp(host: "::1", port: 9464))
    }

    func testBadValuesNameTheirVariable() {
        for (variable, value) in [
            ("IAP_METRICS_LISTEN", "/run/metrics.sock"), ("IAP_METRICS_LISTEN", "9464"),
            ("IAP_METRICS_LISTEN", "127.0.0.1:70000"), ("IAP_LOG_FORMAT", "JSON"), ("IAP_LOG_FORMAT", "logfmt"),
        ] {
            XCTAssertThrowsError(try operations([variable: value]), "\(variable)=\(value)") { error in
                XCTAssertEqual((error as? ConfigurationError)?.variable, variable)
            }
        }
    }
}
