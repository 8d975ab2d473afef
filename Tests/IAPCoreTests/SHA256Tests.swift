import Crypto
import XCTest

@testable import IAPCore

final class SHA256Tests: XCTestCase {
    // FIPS 180-2 appendix B / NIST example vectors.
    func testEmptyMessage() {
        XCTAssertEqual(
            SHA256.hexDigest([UInt8]()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    func testABC() {
        XCTAssertEqual(
            SHA256.hexDigest(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func test448BitMessage() {
        let message = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        XCTAssertEqual(message.count * 8, 448)
        XCTAssertEqual(
            SHA256.hexDigest(message), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    func test896BitMessage() {
        let message = Array(
            ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                + "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu").utf8)
        XCTAssertEqual(message.count * 8, 896)
        XCTAssertEqual(
            SHA256.hexDigest(message), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    }

    func testOneMillionA() {
        XCTAssertEqual(
            SHA256.hexDigest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Lengths around the padding boundaries (one or two final blocks), checked
    /// against Python's hashlib.
    func testPaddingBoundaries() {
        let expected: [Int: String] = [
            55: "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59",
            56: "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562",
            63: "29af2686fd53374a36b0846694cc342177e428d1647515f078784d69cdb9e488",
            64: "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108",
            65: "4bfd2c8b6f1eec7a2afeb48b934ee4b2694182027e6d0fc075074f2fabb31781",
            119: "da18797ed7c3a777f0847f429724a2d8cd5138e6ed2895c3fa1a6d39d18f7ec6",
            120: "f52b23db1fbb6ded89ef42a23ce0c8922c45f25c50b568a93bf1c075420bbb7c",
            127: "92ca0fa6651ee2f97b884b7246a562fa71250fedefe5ebf270d31c546bfea976",
            128: "471fb943aa23c511f6f72f8d1652d9c880cfa392ad80503120547703e56a2be5",
        ]
        for (length, digest) in expected {
            let message = (0..<length).map { UInt8($0 % 251) }
            XCTAssertEqual(SHA256.hexDigest(message), digest, "length \(length)")
        }
    }

    func testSlicesAndNonContiguousCollectionsHashTheirOwnBytes() {
        let padded = Array("xxabcxx".utf8)
        XCTAssertEqual(SHA256.hexDigest(padded[2..<5]), SHA256.hexDigest(Array("abc".utf8)))
        let lazyBytes = "abc".utf8.lazy.map { $0 }
        XCTAssertEqual(
            SHA256.hexDigest(lazyBytes), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func testHexWithDashesHasAUUIDsShape() {
        let bytes: [UInt8] = [0x00, 0x01, 0x0a, 0xff, 0x10, 0x20, 0x4c, 0xde, 0x8f, 0x99, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45]
        XCTAssertEqual(lowercaseHex(bytes, dashesBefore: [4, 6, 8, 10]), "00010aff-1020-4cde-8f99-abcdef012345")
        XCTAssertEqual(lowercaseHex(bytes), "00010aff10204cde8f99abcdef012345")
        XCTAssertEqual(lowercaseHex([UInt8]()), "")
    }
}
