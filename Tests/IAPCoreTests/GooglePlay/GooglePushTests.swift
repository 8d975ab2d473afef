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

    /// A JWKS and a push token made by the Google Play double (Tests/Simulator/googleplay_sim.py, the
    /// stack's audience and push account): the key's n and e as Google encodes them, and its RS256.
    func testATokenOfTheGooglePlayDoubleChecksAgainstItsJWKS() throws {
        let jwks = """
            {"keys":[{"kty":"RSA","alg":"RS256","use":"sig","kid":"3dba975c3ba5eafa59e7ffc928f0709f9ffd6c25","n"\
            :"vuNdap8mn6wb8mwObzFFrMBqFMqU0QwYx2Os9Rd3JO8WFVCtweTRDn8qUQYZqXYjwdFn_QmsZmLGgDrdukMqHmTziJyXMdmAF8\
            xtN5zugyhveV5iFceLwzdVMS1DOWw_1k5t2dCZBv9iPHd0kxS4UfzWVC1eTTWZfa57GcDw9ZZRQKCDDcRt7_OYCvePEKHdAfuMfD\
            9LTgFLstorU6BeQGr-6s_CTXslKbw976cKqwNrW1BrVwYyKQjmSVdFYVeC5sDUfpfUxo3oMPQa1AWcYY7-h5sBz_dycUJhHcgs_Y\
            nhPx3kpprMy4UpicvPVR3PJeSTmUXjyTQjF1NzL_h6PQ","e":"AQAB"}]}
            """
        let token = """
            eyJhbGciOiJSUzI1NiIsImtpZCI6IjNkYmE5NzVjM2JhNWVhZmE1OWU3ZmZjOTI4ZjA3MDlmOWZmZDZjMjUiLCJ0eXAiOiJKV1Qi\
            fQ.eyJhdWQiOiJodHRwOi8vMTI3LjAuMC4xOjg3MDAvdjEvbm90aWZpY2F0aW9ucy9nb29nbGUiLCJhenAiOiIxMTM3NzQyNjQ0N\
            jMwMzgzMjE5NjQiLCJlbWFpbCI6InB1YnN1Yi1wdXNoQGlhcC10ZXN0LmlhbS5nc2VydmljZWFjY291bnQuY29tIiwiZW1haWxfd\
            mVyaWZpZWQiOnRydWUsImV4cCI6MTc2NDQwMzYwMCwiaWF0IjoxNzY0NDAwMDAwLCJpc3MiOiJodHRwczovL2FjY291bnRzLmdvb\
            2dsZS5jb20iLCJzdWIiOiIxMTM3NzQyNjQ0NjMwMzgzMjE5NjQifQ.uVF6sLW8RI1ZMqalWVYlmZqy9PUWvryBhK-W_kaleg9cMj\
            sy9AvXWEYTwEjwWrikX66dMlTKZIxnZpUlsXbLsnMq465snEdO0JEa21ea8QzR2KO4O8kIq2AyPt95rFrH_GCMAepTeaXhtHr3Ku\
            uXOoKgtkfYEMF3FJE4NqFrmWOsAJRaPVE0Qzf5t_0GMIL3HlDNAx-wpE3lO1XESnzcYc_vYX5L5F5CRF_eBa2MYDF4xY1CAmuyq-\
            sKFxG6Mt03w0P0OoAN5X4trmBmljn9Wy9ZSDtyoh3lVi0Ed95tdlT8NPSIjVJaw1qtMjUiZMMY0B8Q0Fl8XVqxgWxtoROJSQ
            """
        let verified = try GooglePushToken.verify(token, keys: GooglePushKeys.parse(Array(jwks.utf8)))
        XCTAssertNil(
            GooglePushClaims.problem(
                verified.claims, audience: "http://127.0.0.1:8700/v1/notifications/google",
                serviceAccount: "pubsub-push@iap-test.iam.gserviceaccount.com", now: 1_764_400_100))
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
