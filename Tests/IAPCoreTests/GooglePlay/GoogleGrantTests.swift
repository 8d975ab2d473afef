import XCTest
import _CryptoExtras

@testable import IAPCore

final class GoogleGrantTests: XCTestCase {
    static let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    static func keyFile(_ changes: [String: String?] = [:]) -> [UInt8] {
        var fields: [String: String?] = [
            "type": "service_account", "client_email": "iap@test.iam.gserviceaccount.com",
            "private_key": key.pemRepresentation, "private_key_id": "abc123", "token_uri": "https://127.0.0.1:9546/token",
        ]
        fields.merge(changes) { $1 }
        let object = JSONObject(fields.compactMap { name, value in value.map { (key: name, value: JSONValue.string($0)) } })
        return JSONValue.object(object).serialized()
    }

    private func decode(_ part: Substring) throws -> JSONObject {
        try XCTUnwrap(JSONParser.parse(XCTUnwrap(Base64.decodeURL(ArraySlice(part.utf8)))).objectValue)
    }

    func testTheKeyFileIsRead() throws {
        let account = try GoogleServiceAccount.parse(Self.keyFile())
        XCTAssertEqual(account.clientEmail, "iap@test.iam.gserviceaccount.com")
        XCTAssertEqual(account.privateKeyID, "abc123")
        XCTAssertEqual(account.tokenURI, "https://127.0.0.1:9546/token")
    }

    func testABadKeyFileNamesTheFieldAndNeverTheKey() {
        for (changes, field) in [
            (["client_email": nil], "client_email"), (["private_key_id": ""], "private_key_id"),
            (["token_uri": "http://example.com/token"], "token_uri"),
            (["private_key": "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----"], "private_key"),
            (["private_key": P256PEM.key], "private_key"),
        ] as [([String: String?], String)] {
            XCTAssertThrowsError(try GoogleServiceAccount.parse(Self.keyFile(changes))) { error in
                let refused = error as? GoogleServiceAccountError
                XCTAssertEqual(refused?.field, field)
                XCTAssertFalse(refused?.description.contains("BEGIN") ?? true)
            }
        }
        XCTAssertThrowsError(try GoogleServiceAccount.parse(Array("[]".utf8))) {
            XCTAssertNil(($0 as? GoogleServiceAccountError)?.field)
        }
    }

    func testTheGrantIsRS256ByTheKeyWithGooglesClaims() throws {
        let signer = GoogleGrantSigner(account: try GoogleServiceAccount.parse(Self.keyFile()))
        let assertion = signer.assertion(issuedAt: 1_700_000_000)
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        XCTAssertEqual(parts.count, 3)
        let header = try decode(parts[0])
        XCTAssertEqual(header["alg"], .string("RS256"))
        XCTAssertEqual(header["kid"], .string("abc123"))
        let claims = try decode(parts[1])
        XCTAssertEqual(claims["iss"], .string("iap@test.iam.gserviceaccount.com"))
        XCTAssertEqual(claims["scope"], .string("https://www.googleapis.com/auth/androidpublisher"))
        XCTAssertEqual(claims["aud"], .string("https://127.0.0.1:9546/token"))
        XCTAssertEqual(claims["iat"], .number("1700000000"))
        XCTAssertEqual(claims["exp"], .number("1700003600"))
        let signature = _RSA.Signing.RSASignature(rawRepresentation: try XCTUnwrap(Base64.decodeURL(ArraySlice(parts[2].utf8))))
        let input = Array("\(parts[0]).\(parts[1])".utf8)
        XCTAssertTrue(Self.key.publicKey.isValidSignature(signature, for: input, padding: .insecurePKCS1v1_5))
        XCTAssertFalse(Self.key.publicKey.isValidSignature(signature, for: input + [0], padding: .insecurePKCS1v1_5))
        XCTAssertEqual(
            signer.tokenRequestBody(issuedAt: 1_700_000_000),
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion)
    }

    func testTheAccessTokenServesUntilAMinuteBeforeItExpiresAndA401ForgetsIt() throws {
        let token = try GoogleAccessToken.parse(
            Array(#"{"access_token": "ya29.a", "expires_in": 3599, "token_type": "Bearer"}"#.utf8), receivedAt: 1000)
        XCTAssertEqual(token, GoogleAccessToken(token: "ya29.a", expiresAt: 4599))
        var cache = GoogleAccessTokenCache()
        XCTAssertNil(cache.token(at: 1000))
        cache.store(token)
        XCTAssertEqual(cache.token(at: 4538), "ya29.a")
        XCTAssertNil(cache.token(at: 4539))
        cache.refused("ya29.older")
        XCTAssertEqual(cache.token(at: 2000), "ya29.a", "a 401 to an older token leaves the newer one")
        cache.refused("ya29.a")
        XCTAssertNil(cache.token(at: 2000))
        for bad in [#"{"expires_in": 3599}"#, #"{"access_token": "a b", "expires_in": 1}"#,
                    #"{"access_token": "t", "expires_in": 0}"#, #"{"access_token": "t", "expires_in": 9, "token_type": "mac"}"#] {
            XCTAssertThrowsError(try GoogleAccessToken.parse(Array(bad.utf8), receivedAt: 0), bad)
        }
    }
}

/// A P-256 key: a key file must hold an RSA one.
private enum P256PEM {
    static let key = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgevZzL1gdAFr88hb2
        OF/2NxApJCzGCEDdfSp6VQO30hyhRANCAAQRWz+jn65BtOMvdyHKcvjBeBSDZH2r
        1RTwjmYSi9R/zpBnuQ4EiMnCqfMPWiZqB4QdbAd0E7oH50VpuZ1P087G
        -----END PRIVATE KEY-----
        """
}
