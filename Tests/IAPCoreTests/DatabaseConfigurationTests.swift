import XCTest

@testable import IAPCore

final class DatabaseConfigurationTests: XCTestCase {
    private func error(_ env: [String: String]) -> ConfigurationError? {
        do {
            _ = try DatabaseConfiguration.fromEnvironment(env)
            return nil
        } catch {
            return error
        }
    }

    func testTLSIsOffByDefault() throws {
        let configuration = try DatabaseConfiguration.fromEnvironment([:])
        XCTAssertEqual(configuration.tls, .off)
        XCTAssertNil(configuration.caFile)
        XCTAssertEqual(try DatabaseConfiguration.fromEnvironment(["IAP_DB_TLS": ""]).tls, .off)
        XCTAssertEqual(try DatabaseConfiguration.fromEnvironment(["IAP_DB_TLS": "off"]).tls, .off)
    }

    func testVerifyWithAndWithoutACAFile() throws {
        let withCA = try DatabaseConfiguration.fromEnvironment(
            ["IAP_DB_TLS": "verify", "IAP_DB_CA_FILE": "/etc/iap-fcgi/mariadb-ca.pem"])
        XCTAssertEqual(withCA.tls, .verify)
        XCTAssertEqual(withCA.caFile, "/etc/iap-fcgi/mariadb-ca.pem")
        let systemCAs = try DatabaseConfiguration.fromEnvironment(["IAP_DB_TLS": "VERIFY"])
        XCTAssertEqual(systemCAs.tls, .verify)
        XCTAssertNil(systemCAs.caFile)
    }

    func testAnyOtherModeStopsStartUpNamingTheVariable() {
        for value in ["on", "required", "true", "1", "verify-ca", "yes", " verify"] {
            let found = error(["IAP_DB_TLS": value])
            XCTAssertEqual(found?.variable, "IAP_DB_TLS", value)
            XCTAssertTrue(found?.description.contains("must be off") ?? false, value)
            XCTAssertTrue(found?.description.contains(String(reflecting: value)) ?? false, value)
        }
    }

    func testACAFileWithTLSOffIsAMistake() {
        let found = error(["IAP_DB_CA_FILE": "/etc/ssl/mariadb-ca.pem"])
        XCTAssertEqual(found?.variable, "IAP_DB_CA_FILE")
        XCTAssertTrue(found?.problem.contains("IAP_DB_TLS is off") ?? false)
        XCTAssertEqual(error(["IAP_DB_CA_FILE": "/ca.pem", "IAP_DB_TLS": "off"])?.variable, "IAP_DB_CA_FILE")
    }

    func testVerifyOverAUnixSocketIsAMistake() {
        let found = error(["IAP_DB_TLS": "verify", "IAP_DB_SOCKET": "/run/mysqld/mysqld.sock"])
        XCTAssertEqual(found?.variable, "IAP_DB_TLS")
        XCTAssertTrue(found?.problem.contains("IAP_DB_SOCKET is set") ?? false)
    }

    func testTheServiceConfigurationCarriesTheTLSSettings() throws {
        let service = try ServiceConfiguration.fromEnvironment(
            ["IAP_BUNDLE_IDS": "com.example.game", "IAP_DB_TLS": "verify", "IAP_DB_CA_FILE": "/ca.pem"])
        XCTAssertEqual(service.database.tls, .verify)
        XCTAssertEqual(service.database.caFile, "/ca.pem")
        XCTAssertTrue(service.database.description.hasSuffix("tls: verify with /ca.pem)"))
    }
}
