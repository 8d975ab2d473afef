import Crypto
import XCTest

@testable import IAPCore

final class AppStoreTokenTests: XCTestCase {
    private let key = P256.Signing.PrivateKey()

    private func signer() throws -> AppStoreTokenSigner {
        try AppStoreTokenSigner(
            privateKeyPEM: key.pemRepresentation, keyID: "TESTKEY123", issuerID: "issuer-1", bundleID: "com.example.game")
    }

    private func decode(_ part: Substring) throws -> JSONObject {
        try XCTUnwrap(JSONParser.parse(XCTUnwrap(Base64.decodeURL(ArraySlice(part.utf8)))).objectValue)
    }

    func testTheTokenCarriesEveryClaimAndVerifiesWithThePublicKey() throws {
        let token = try signer().token(issuedAt: 1_700_000_000)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        XCTAssertEqual(parts.count, 3)
        let header = try decode(parts[0])
        XCTAssertEqual(header["alg"], .string("ES256"))
        XCTAssertEqual(header["kid"], .string("TESTKEY123"))
        XCTAssertEqual(header["typ"], .string("JWT"))
        let claims = try decode(parts[1])
        XCTAssertEqual(claims["iss"], .string("issuer-1"))
        XCTAssertEqual(claims["iat"], .number("1700000000"))
        XCTAssertEqual(claims["exp"], .number("1700001200"))
        XCTAssertEqual(claims["aud"], .string("appstoreconnect-v1"))
        XCTAssertEqual(claims["bid"], .string("com.example.game"))
        let signature = try P256.Signing.ECDSASignature(
            rawRepresentation: XCTUnwrap(Base64.decodeURL(ArraySlice(parts[2].utf8))))
        XCTAssertTrue(key.publicKey.isValidSignature(signature, for: Array("\(parts[0]).\(parts[1])".utf8)))
        XCTAssertFalse(P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: Array("\(parts[0]).\(parts[1])".utf8)))
    }

    func testTheLifetimeIsWithinApplesHour() {
        XCTAssertLessThanOrEqual(AppStoreTokenSigner.lifetimeSeconds, 3600)
        XCTAssertLessThan(AppStoreTokenCache.reuseSeconds, AppStoreTokenSigner.lifetimeSeconds)
    }

    func testAP384KeyOrGarbageIsRefused() {
        XCTAssertThrowsError(
            try AppStoreTokenSigner(
                privateKeyPEM: P384.Signing.PrivateKey().pemRepresentation, keyID: "k", issuerID: "i", bundleID: "b"))
        XCTAssertThrowsError(try AppStoreTokenSigner(privateKeyPEM: "not a key", keyID: "k", issuerID: "i", bundleID: "b"))
    }

    func testTheCacheReusesATokenThenSignsANewOne() throws {
        var cache = AppStoreTokenCache(signer: try signer())
        let first = cache.token(atSeconds: 1_000_000)
        XCTAssertEqual(cache.token(atSeconds: 1_000_000 + AppStoreTokenCache.reuseSeconds - 1), first)
        let second = cache.token(atSeconds: 1_000_000 + AppStoreTokenCache.reuseSeconds)
        XCTAssertNotEqual(second, first)
        XCTAssertEqual(cache.token(atSeconds: 1_000_000 + AppStoreTokenCache.reuseSeconds + 5), second)
        // A clock stepped back does not keep a token whose iat lies in the future.
        XCTAssertNotEqual(cache.token(atSeconds: 999_000), second)
    }

    func testBase64URLEncodingRoundTrips() {
        for length in 0..<20 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 250) }
            let text = Base64.encodeURL(bytes)
            XCTAssertFalse(text.contains("=") || text.contains("+") || text.contains("/"))
            XCTAssertEqual(Base64.decodeURL(ArraySlice(text.utf8)), bytes)
        }
    }
}
