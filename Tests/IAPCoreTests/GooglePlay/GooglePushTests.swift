import XCTest
import _CryptoExtras

@testable import IAPCore

final class GooglePushTests: XCTestCase {
    static let trusted = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let untrusted = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    let audience = "https://iap.example.com/v1/notifications/google"
    let account = "pubsub-push@game.iam.gserviceaccount.com"
    let now: Int64 = 1_764_400_000

    static func jwks() -> [UInt8] {
        let (n, e) = components(trusted.publicKey)
        return Array(#"""
            {"keys": [{"kty": "EC", "kid": "ec", "crv": "P-256"},
                      {"kty": "RSA", "alg": "RS256", "use": "sig", "kid": "trusted", "n": "\#(n)", "e": "\#(e)"}]}
            """#.utf8)
    }

    /// n and e (base64url) of a public key, as a JWKS carries them.
    static func components(_ key: _RSA.Signing.PublicKey) -> (String, String) {
        let primitives = try! key.getKeyPrimitives()
        return (Base64.encodeURL(Array(primitives.modulus)), Base64.encodeURL(Array(primitives.publicExponent)))
    }

    func sign(_ claims: JSONObject, key: _RSA.Signing.PrivateKey = trusted, header: JSONObject? = nil) -> String {
        let head = header ?? ["alg": .string("RS256"), "kid": .string("trusted"), "typ": .string("JWT")]
        let input = Base64.encodeURL(JSONValue.object(head).serialized()) + "."
            + Base64.encodeURL(JSONValue.object(claims).serialized())
        let signature = try! key.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64.encodeURL(signature.rawRepresentation)
    }

    var goodClaims: JSONObject {
        ["iss": .string("https://accounts.google.com"), "aud": .string(audience), "email": .string(account),
         "email_verified": .bool(true), "iat": .int(now - 10), "exp": .int(now + 3590)]
    }

    func testATokenSignedByAKeyOfTheJWKSVerifies() throws {
        let keys = try GooglePushKeys.parse(Self.jwks())
        XCTAssertEqual(Array(keys.keys.keys), ["trusted"])
        let token = try GooglePushToken.verify(sign(goodClaims), keys: keys)
        XCTAssertEqual(token.keyID, "trusted")
        XCTAssertEqual(token.claims, goodClaims)
    }

    func testAnUntrustedKeyAnUnknownKidAndAnotherAlgorithmAreRefused() throws {
        let keys = try GooglePushKeys.parse(Self.jwks())
        XCTAssertThrowsError(try GooglePushToken.verify(sign(goodClaims, key: Self.untrusted), keys: keys)) {
            XCTAssertEqual($0 as? GooglePushToken.Problem, .badSignature)
        }
        let unknown: JSONObject = ["alg": .string("RS256"), "kid": .string("rotated")]
        XCTAssertThrowsError(try GooglePushToken.verify(sign(goodClaims, header: unknown), keys: keys)) {
            XCTAssertEqual($0 as? GooglePushToken.Problem, .unknownKey("rotated"))
        }
        let hs256: JSONObject = ["alg": .string("HS256"), "kid": .string("trusted")]
        XCTAssertThrowsError(try GooglePushToken.verify(sign(goodClaims, header: hs256), keys: keys)) {
            XCTAssertEqual($0 as? GooglePushToken.Problem, .unsupportedAlgorithm)
        }
        let good = sign(goodClaims)
        let tampered = good.split(separator: ".").enumerated().map {
            $0.offset == 1 ? Base64.encodeURL(JSONValue.object(["email": .string("x")]).serialized()) : String($0.element)
        }.joined(separator: ".")
        XCTAssertThrowsError(try GooglePushToken.verify(tampered, keys: keys)) {
            XCTAssertEqual($0 as? GooglePushToken.Problem, .badSignature)
        }
        for malformed in ["", "a.b", "a.b.c", good + ".d"] {
            XCTAssertThrowsError(try GooglePushToken.verify(malformed, keys: keys), malformed)
        }
        XCTAssertThrowsError(try GooglePushKeys.parse(Array(#"{"keys": [{"kty": "EC", "kid": "ec"}]}"#.utf8)))
    }

    private func problem(_ changes: [String: JSONValue?]) -> GooglePushClaims.Problem? {
        var claims = goodClaims
        for (name, value) in changes {
            claims.members.removeAll { $0.key == name }
            if let value { claims.members.append((key: name, value: value)) }
        }
        return GooglePushClaims.problem(claims, audience: audience, serviceAccount: account, now: now)
    }

    func testTheClaimsMustBeGooglesForThisSubscriptionAndCurrent() {
        XCTAssertNil(problem([:]))
        XCTAssertNil(problem(["iss": .string("accounts.google.com")]))
        XCTAssertNil(problem(["aud": .array([.string("other"), .string(audience)])]))
        XCTAssertNil(problem(["exp": .int(now - 59)]), "60 s of skew")
        XCTAssertNil(problem(["iat": .int(now + 60)]), "60 s of skew")
        XCTAssertEqual(problem(["iss": .string("https://evil.example.com")]), .issuer)
        XCTAssertEqual(problem(["aud": .string("https://other.example.com")]), .audience)
        XCTAssertEqual(problem(["aud": nil]), .audience)
        XCTAssertEqual(problem(["email": .string("someone@gmail.com")]), .email)
        XCTAssertEqual(problem(["email_verified": .bool(false)]), .emailNotVerified)
        XCTAssertEqual(problem(["email_verified": nil]), .emailNotVerified)
        XCTAssertEqual(problem(["exp": .int(now - 60)]), .expired)
        XCTAssertEqual(problem(["iat": .int(now + 61)]), .issuedInFuture)
        XCTAssertEqual(problem(["exp": nil]), .missingTimes)
    }
}
