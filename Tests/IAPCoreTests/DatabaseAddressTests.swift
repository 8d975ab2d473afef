import XCTest

@testable import IAPCore

final class DatabaseAddressTests: XCTestCase {
    func testOneHostTakesTheDefaultPort() {
        XCTAssertEqual(DatabaseAddress.list("db.internal", defaultPort: 3306), [DatabaseAddress(host: "db.internal", port: 3306)])
    }

    func testAListKeepsItsOrderAndEachEntryMayNameItsPort() {
        XCTAssertEqual(
            DatabaseAddress.list("127.0.0.1:3317, 127.0.0.1:3318,db3,[fd00::3]:3307,[::1]", defaultPort: 3306),
            [
                DatabaseAddress(host: "127.0.0.1", port: 3317), DatabaseAddress(host: "127.0.0.1", port: 3318),
                DatabaseAddress(host: "db3", port: 3306), DatabaseAddress(host: "fd00::3", port: 3307),
                DatabaseAddress(host: "::1", port: 3306),
            ])
    }

    func testMalformedEntriesRefuseTheWholeList() {
        for text in ["", ",", "db1,,db2", "db1,", "db:0", "db:65536", "db:33o6", "db:", ":3306", "fd00::3:3306",
                     "[fd00::3", "[]:3306", "[::1]3306", "db 1", "/run/mysqld.sock", "db:+3306", "db:003306"] {
            XCTAssertNil(DatabaseAddress.list(text, defaultPort: 3306), text)
        }
    }

    func testTheEnvironmentRefusesAMalformedHostList() throws {
        XCTAssertThrowsError(try DatabaseConfiguration.fromEnvironment(["IAP_DB_HOST": "db1,,db2"])) { error in
            XCTAssertTrue("\(error)".contains("IAP_DB_HOST"), "\(error)")
        }
        let cluster = try DatabaseConfiguration.fromEnvironment(
            ["IAP_DB_HOST": "10.0.0.1,10.0.0.2:3307", "IAP_DB_PORT": "3317"])
        XCTAssertEqual(
            cluster.addresses,
            [DatabaseAddress(host: "10.0.0.1", port: 3317), DatabaseAddress(host: "10.0.0.2", port: 3307)])
    }

    func testDescriptionsBracketIPv6() {
        XCTAssertEqual(DatabaseAddress(host: "fd00::3", port: 3307).description, "[fd00::3]:3307")
        XCTAssertEqual(DatabaseAddress(host: "db", port: 3306).description, "db:3306")
    }
}
