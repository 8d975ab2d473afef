import XCTest

@testable import IAPCore

final class IPAddressTests: XCTestCase {
    func testIPv4() {
        XCTAssertEqual(IPAddress("203.0.113.7")?.bytes, [203, 0, 113, 7])
        XCTAssertEqual(IPAddress("0.0.0.0")?.bytes, [0, 0, 0, 0])
        XCTAssertEqual(IPAddress("255.255.255.255")?.description, "255.255.255.255")
    }

    func testIPv6() {
        XCTAssertEqual(IPAddress("::1")?.bytes, Array(repeating: 0, count: 15) + [1])
        XCTAssertEqual(IPAddress("::")?.bytes, Array(repeating: 0, count: 16))
        XCTAssertEqual(
            IPAddress("2001:DB8::a:1")?.bytes, [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a, 0, 1])
        XCTAssertEqual(IPAddress("2001:db8:0:0:0:0:0:1"), IPAddress("2001:db8::1"))
        XCTAssertEqual(IPAddress("1::"), IPAddress("1:0:0:0:0:0:0:0"))
        XCTAssertEqual(IPAddress("64:ff9b::192.0.2.33")?.bytes.suffix(4), [192, 0, 2, 33])
    }

    func testAnIPv4MappedAddressIsItsIPv4Address() {
        XCTAssertEqual(IPAddress("::ffff:10.0.0.5"), IPAddress("10.0.0.5"))
        XCTAssertEqual(IPAddress("::ffff:a00:5"), IPAddress("10.0.0.5"))
        XCTAssertEqual(IPAddress(bytes: Array(repeating: 0, count: 10) + [0xff, 0xff, 10, 0, 0, 5])?.bytes, [10, 0, 0, 5])
        XCTAssertNil(IPAddress(bytes: [1, 2, 3]))
    }

    func testLoopback() {
        for text in ["127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1"] {
            XCTAssertEqual(IPAddress(text)?.isLoopback, true, text)
        }
        for text in ["0.0.0.0", "128.0.0.1", "::", "::2", "10.0.0.1"] {
            XCTAssertEqual(IPAddress(text)?.isLoopback, false, text)
        }
    }

    func testWhatIsNotAnAddress() {
        for text in [
            "", "localhost", "1.2.3", "1.2.3.4.5", "256.0.0.1", "01.2.3.4", "1.2.3.-4", "+1.2.3.4", "1.2.3.4/8",
            " 1.2.3.4", ":::", "1:::2", "1::2::3", ":1::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1::2:3:4:5:6:7:8",
            "12345::", "g::1", "+1::", "fe80::1%eth0", "1.2.3.4::", "::1.2.3",
        ] {
            XCTAssertNil(IPAddress(text), text)
        }
    }
}
