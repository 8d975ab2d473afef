import XCTest

@testable import IAPCore

final class ServiceConfigurationTests: XCTestCase {
    private let minimal = ["IAP_BUNDLE_IDS": "com.example.game"]

    private func configuration(_ extra: [String: String]) throws(ConfigurationError) -> ServiceConfiguration {
        try ServiceConfiguration.fromEnvironment(minimal.merging(extra) { $1 })
    }

    private func configurationError(_ extra: [String: String]) -> ConfigurationError? {
        do {
            _ = try configuration(extra)
            return nil
        } catch {
            return error
        }
    }

    func testDefaults() throws {
        let config = try configuration([:])
        XCTAssertEqual(config.listen, .inheritedSocket)
        XCTAssertEqual(
            config.database,
            DatabaseConfiguration(host: "127.0.0.1", port: 3306, socket: nil, user: "iap", password: "", name: "iap"))
        XCTAssertEqual(config.bundleIDs, ["com.example.game"])
        XCTAssertEqual(config.productionURL, "https://buy.itunes.apple.com/verifyReceipt")
        XCTAssertEqual(config.sandboxURL, "https://sandbox.itunes.apple.com/verifyReceipt")
        XCTAssertNil(config.caFile)
        XCTAssertNil(config.appleRootCAFile, "the compiled-in Apple Root CA - G3")
        XCTAssertEqual(config.appleTimeoutMs, 15000)
        XCTAssertNil(config.sharedSecret)
        XCTAssertEqual(config.sandboxPolicy, .review)
        XCTAssertEqual(config.acceptThreads, 8)
    }

    func testEveryVariableIsRead() throws {
        let config = try ServiceConfiguration.fromEnvironment([
            "IAP_LISTEN": "/tmp/iap-test/iap-fcgi.sock",
            "IAP_DB_HOST": "db.internal", "IAP_DB_PORT": "3317", "IAP_DB_SOCKET": "/tmp/iap-test/mysql/mysqld.sock",
            "IAP_DB_USER": "iapuser", "IAP_DB_PASSWORD": "iap-local", "IAP_DB_NAME": "iapdb",
            "IAP_BUNDLE_IDS": " com.example.game , ,com.example.game2,",
            "IAP_APPLE_PRODUCTION_URL": "https://127.0.0.1:9553/verifyReceipt",
            "IAP_APPLE_SANDBOX_URL": "https://127.0.0.1:9554/verifyReceipt",
            "IAP_CA_FILE": "/tmp/iap-test/certs/ca.pem", "IAP_APPLE_TIMEOUT_MS": "2000",
            "IAP_APPLE_ROOT_CA_FILE": "/tmp/iap-test/certs/signing-root.pem",
            "IAP_SHARED_SECRET": "0123456789abcdef0123456789abcdef", "IAP_SANDBOX_POLICY": "never",
            "IAP_ACCEPT_THREADS": "16",
        ])
        XCTAssertEqual(config.listen, .unix(path: "/tmp/iap-test/iap-fcgi.sock"))
        XCTAssertEqual(
            config.database,
            DatabaseConfiguration(
                host: "db.internal", port: 3317, socket: "/tmp/iap-test/mysql/mysqld.sock", user: "iapuser",
                password: "iap-local", name: "iapdb"))
        XCTAssertEqual(config.bundleIDs, ["com.example.game", "com.example.game2"])
        XCTAssertEqual(config.productionURL, "https://127.0.0.1:9553/verifyReceipt")
        XCTAssertEqual(config.sandboxURL, "https://127.0.0.1:9554/verifyReceipt")
        XCTAssertEqual(config.caFile, "/tmp/iap-test/certs/ca.pem")
        XCTAssertEqual(config.appleRootCAFile, "/tmp/iap-test/certs/signing-root.pem")
        XCTAssertEqual(config.appleTimeoutMs, 2000)
        XCTAssertEqual(config.sharedSecret, "0123456789abcdef0123456789abcdef")
        XCTAssertEqual(config.sandboxPolicy, .never)
        XCTAssertEqual(config.acceptThreads, 16)
    }

    func testEmptyValuesCountAsUnset() throws {
        let config = try configuration([
            "IAP_LISTEN": "", "IAP_DB_PORT": "", "IAP_DB_SOCKET": "", "IAP_SHARED_SECRET": "", "IAP_CA_FILE": "",
            "IAP_APPLE_ROOT_CA_FILE": "", "IAP_APPLE_TIMEOUT_MS": "", "IAP_SANDBOX_POLICY": "",
        ])
        XCTAssertEqual(config.listen, .inheritedSocket)
        XCTAssertEqual(config.database.port, 3306)
        XCTAssertNil(config.database.socket)
        XCTAssertNil(config.sharedSecret)
        XCTAssertNil(config.caFile)
        XCTAssertNil(config.appleRootCAFile)
        XCTAssertEqual(config.appleTimeoutMs, 15000)
        XCTAssertEqual(config.sandboxPolicy, .review)
    }

    func testListenAddresses() throws {
        XCTAssertEqual(try configuration(["IAP_LISTEN": "127.0.0.1:9000"]).listen, .tcp(host: "127.0.0.1", port: 9000))
        XCTAssertEqual(try configuration(["IAP_LISTEN": "localhost:1"]).listen, .tcp(host: "localhost", port: 1))
        XCTAssertEqual(try configuration(["IAP_LISTEN": "[::1]:9000"]).listen, .tcp(host: "::1", port: 9000))
        XCTAssertEqual(try configuration(["IAP_LISTEN": "./iap.sock"]).listen, .unix(path: "./iap.sock"))
        XCTAssertEqual(ListenAddress.tcp(host: "::1", port: 9000).description, "[::1]:9000")
        XCTAssertEqual(ListenAddress.unix(path: "/run/iap.sock").description, "unix:/run/iap.sock")
    }

    func testBadListenAddressIsNamed() {
        for value in [
            "9000", "iap.sock", "127.0.0.1", ":9000", "host:", "host:0", "host:65536", "host:90a", "::1:9000",
            "host:+90",
            "/" + String(repeating: "s", count: 107),
        ] {
            let error = configurationError(["IAP_LISTEN": value])
            XCTAssertEqual(error?.variable, "IAP_LISTEN", value)
            XCTAssertEqual(error?.description.hasPrefix("IAP_LISTEN: "), true, value)
            XCTAssertEqual(error?.description.contains(String(reflecting: value)), true, value)
        }
    }

    func testTimeoutMessageMatchesTheDocumentedOne() {
        XCTAssertEqual(
            configurationError(["IAP_APPLE_TIMEOUT_MS": "abc"])?.description,
            #"IAP_APPLE_TIMEOUT_MS: must be a whole number of milliseconds from 100 to 120000 (got "abc")"#)
        for value in ["99", "120001", "-5", "+200", "1.5", "15000ms", " 200"] {
            XCTAssertEqual(configurationError(["IAP_APPLE_TIMEOUT_MS": value])?.variable, "IAP_APPLE_TIMEOUT_MS", value)
        }
        XCTAssertEqual(try configuration(["IAP_APPLE_TIMEOUT_MS": "100"]).appleTimeoutMs, 100)
        XCTAssertEqual(try configuration(["IAP_APPLE_TIMEOUT_MS": "120000"]).appleTimeoutMs, 120_000)
    }

    func testEachBadVariableIsNamed() {
        let cases: [(String, String)] = [
            ("IAP_DB_PORT", "abc"), ("IAP_DB_PORT", "0"), ("IAP_DB_PORT", "65536"),
            ("IAP_APPLE_PRODUCTION_URL", "ftp://buy.itunes.apple.com/verifyReceipt"),
            ("IAP_APPLE_PRODUCTION_URL", "https://"), ("IAP_APPLE_SANDBOX_URL", "sandbox.itunes.apple.com"),
            ("IAP_APPLE_SANDBOX_URL", "https://bad host/verifyReceipt"),
            ("IAP_SANDBOX_POLICY", "sometimes"), ("IAP_SANDBOX_POLICY", "Review"),
            ("IAP_ACCEPT_THREADS", "0"), ("IAP_ACCEPT_THREADS", "257"), ("IAP_ACCEPT_THREADS", "many"),
        ]
        for (variable, value) in cases {
            let error = configurationError([variable: value])
            XCTAssertEqual(error?.variable, variable, value)
            XCTAssertEqual(error?.description.hasPrefix(variable + ": "), true, value)
            XCTAssertEqual(error?.description.contains(String(reflecting: value)), true, value)
        }
        XCTAssertEqual(
            configurationError(["IAP_SANDBOX_POLICY": "sometimes"])?.problem,
            #"must be one of review, always, never (got "sometimes")"#)
    }

    func testVerifyQueueLimit() throws {
        XCTAssertEqual(try configuration([:]).verifyQueueLimit, QueueLimit(jobs: 4096, bytes: 64 << 20))
        XCTAssertEqual(
            try configuration(["IAP_VERIFY_QUEUE_LIMIT": "64", "IAP_VERIFY_QUEUE_MIB": "4"]).verifyQueueLimit,
            QueueLimit(jobs: 64, bytes: 4 << 20))
        XCTAssertEqual(
            try configuration(["IAP_VERIFY_QUEUE_LIMIT": "1000000", "IAP_VERIFY_QUEUE_MIB": "65536"]).verifyQueueLimit,
            QueueLimit(jobs: 1_000_000, bytes: 65536 << 20))
        XCTAssertEqual(
            try configuration(["IAP_VERIFY_QUEUE_LIMIT": "", "IAP_VERIFY_QUEUE_MIB": ""]).verifyQueueLimit, QueueLimit())
        for (variable, value) in [
            ("IAP_VERIFY_QUEUE_LIMIT", "0"), ("IAP_VERIFY_QUEUE_LIMIT", "1000001"), ("IAP_VERIFY_QUEUE_LIMIT", "lots"),
            ("IAP_VERIFY_QUEUE_MIB", "0"), ("IAP_VERIFY_QUEUE_MIB", "65537"), ("IAP_VERIFY_QUEUE_MIB", "64M"),
        ] {
            let error = configurationError([variable: value])
            XCTAssertEqual(error?.variable, variable, value)
            XCTAssertEqual(error?.description.contains(String(reflecting: value)), true, value)
        }
        XCTAssertEqual(
            configurationError(["IAP_VERIFY_QUEUE_MIB": "0"])?.description,
            #"IAP_VERIFY_QUEUE_MIB: must be a whole number of MiB from 1 to 65536 (got "0")"#)
    }

    func testPlainHTTPIsRefusedBecauseTLSVerificationCannotBeTurnedOff() {
        for variable in ["IAP_APPLE_PRODUCTION_URL", "IAP_APPLE_SANDBOX_URL"] {
            let error = configurationError([variable: "http://127.0.0.1:9553/verifyReceipt"])
            XCTAssertEqual(error?.variable, variable)
            XCTAssertEqual(error?.problem.contains("TLS verification cannot be turned off"), true)
        }
        XCTAssertEqual(configurationError(["IAP_APPLE_SANDBOX_URL": "HTTP://x/"])?.variable, "IAP_APPLE_SANDBOX_URL")
    }

    func testBundleIDsAreRequired() {
        for env in [[:], ["IAP_BUNDLE_IDS": ""], ["IAP_BUNDLE_IDS": " , ,"]] {
            let error: ConfigurationError?
            do {
                _ = try ServiceConfiguration.fromEnvironment(env)
                error = nil
            } catch let caught {
                error = caught
            }
            XCTAssertEqual(error?.variable, "IAP_BUNDLE_IDS", "\(env)")
            XCTAssertEqual(error?.description.hasPrefix("IAP_BUNDLE_IDS: is required"), true)
        }
    }

    func testSecretsAreNeverEchoedInErrors() {
        let secret = "s3cr3t-value\n"
        let error = configurationError(["IAP_SHARED_SECRET": secret])
        XCTAssertEqual(error?.variable, "IAP_SHARED_SECRET")
        XCTAssertEqual(error?.description.contains("s3cr3t"), false)
        XCTAssertEqual(error?.description.contains("got"), false)

        XCTAssertEqual(
            ConfigurationError.invalid("IAP_DB_PASSWORD", "is odd", got: "hunter2").description,
            "IAP_DB_PASSWORD: is odd")
        XCTAssertEqual(
            ConfigurationError.invalid("IAP_DB_NAME", "is odd", got: "iap").description,
            #"IAP_DB_NAME: is odd (got "iap")"#)
    }

    func testDescriptionsRedactPasswordAndSecret() throws {
        let config = try configuration([
            "IAP_DB_PASSWORD": "hunter2-password", "IAP_SHARED_SECRET": "feedfacefeedfacefeedfacefeedface",
        ])
        var dumped = ""
        dump(config, to: &dumped)
        var dumpedDatabase = ""
        dump(config.database, to: &dumpedDatabase)
        let renderings = [
            config.description, config.debugDescription, String(describing: config), String(reflecting: config),
            "\(config)", dumped, config.database.description, String(reflecting: config.database), dumpedDatabase,
        ]
        for text in renderings {
            XCTAssertFalse(text.contains("hunter2"), text)
            XCTAssertFalse(text.contains("feedface"), text)
        }
        XCTAssertTrue(config.description.contains("password: <redacted>"))
        XCTAssertTrue(config.description.contains("sharedSecret: <redacted>"))
        XCTAssertTrue(config.description.contains("com.example.game"), "the rest stays visible")
        XCTAssertTrue(dumped.contains("<redacted>"))
        XCTAssertTrue(try configuration([:]).description.contains("sharedSecret: <unset>"))
    }

    func testANonLoopbackTCPAddressNeedsAllowedClientAddresses() {
        for listen in ["0.0.0.0:9000", "[::]:9000", "10.0.0.5:9000", "iap.internal:9000", "128.0.0.1:9000"] {
            let error = configurationError(["IAP_LISTEN": listen])
            XCTAssertEqual(error?.variable, "IAP_FCGI_ALLOWED_ADDRESSES", listen)
            XCTAssertEqual(error?.problem.contains("FCGI_WEB_SERVER_ADDRS"), true, listen)
            XCTAssertEqual(error?.problem.contains(listen), true, listen)
        }
        for listen in ["127.0.0.1:9000", "127.8.9.10:9000", "localhost:9000", "[::1]:9000", "/run/iap.sock"] {
            XCTAssertNil(configurationError(["IAP_LISTEN": listen]), listen)
        }
        XCTAssertNil(configurationError([:]), "an inherited socket is checked once it is open")
    }

    func testAllowedClientAddressesAreRead() throws {
        let config = try configuration([
            "IAP_LISTEN": "0.0.0.0:9000", "IAP_FCGI_ALLOWED_ADDRESSES": " 10.0.0.5, ,2001:db8::7,",
        ])
        XCTAssertEqual(config.allowedClientAddresses, [IPAddress("10.0.0.5")!, IPAddress("2001:db8::7")!])
        XCTAssertTrue(config.description.contains("allowedClientAddresses"))
        XCTAssertEqual(try configuration([:]).allowedClientAddresses, [])
    }

    func testLibfcgiVariableServesWhenOursIsUnset() throws {
        let libfcgiOnly = try configuration(["IAP_LISTEN": "0.0.0.0:9000", "FCGI_WEB_SERVER_ADDRS": "10.0.0.6"])
        XCTAssertEqual(libfcgiOnly.allowedClientAddresses, [IPAddress("10.0.0.6")!])
        let both = try configuration([
            "IAP_LISTEN": "0.0.0.0:9000", "IAP_FCGI_ALLOWED_ADDRESSES": "10.0.0.5", "FCGI_WEB_SERVER_ADDRS": "10.0.0.6",
        ])
        XCTAssertEqual(both.allowedClientAddresses, [IPAddress("10.0.0.5")!])
    }

    func testBadAllowedClientAddressesAreNamed() {
        for (variable, value) in [
            ("IAP_FCGI_ALLOWED_ADDRESSES", "10.0.0.5,nginx.internal"), ("IAP_FCGI_ALLOWED_ADDRESSES", "10.0.0.0/8"),
            ("FCGI_WEB_SERVER_ADDRS", "10.0.0.256"),
        ] {
            let error = configurationError(["IAP_LISTEN": "0.0.0.0:9000", variable: value])
            XCTAssertEqual(error?.variable, variable, value)
            XCTAssertEqual(error?.description.contains(String(reflecting: value)), true, value)
        }
    }

    func testAnInheritedSocketOnANonLoopbackAddressNeedsAllowedClientAddresses() throws {
        let open = try configuration([:])
        XCTAssertThrowsError(try open.checkInheritedSocket(listeningOn: IPAddress("0.0.0.0"))) { error in
            XCTAssertEqual((error as? ConfigurationError)?.variable, "IAP_FCGI_ALLOWED_ADDRESSES")
            XCTAssertEqual((error as? ConfigurationError)?.problem.contains("0.0.0.0"), true)
        }
        XCTAssertNoThrow(try open.checkInheritedSocket(listeningOn: nil), "a unix socket")
        XCTAssertNoThrow(try open.checkInheritedSocket(listeningOn: IPAddress("127.0.0.1")))
        XCTAssertNoThrow(try open.checkInheritedSocket(listeningOn: IPAddress("::1")))
        let restricted = try configuration(["IAP_FCGI_ALLOWED_ADDRESSES": "10.0.0.5"])
        XCTAssertNoThrow(try restricted.checkInheritedSocket(listeningOn: IPAddress("0.0.0.0")))
    }
}
