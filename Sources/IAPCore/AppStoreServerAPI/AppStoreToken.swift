import Crypto

/// Signs the bearer tokens of the App Store Server API (docs/apple.md): a JWT,
/// ES256 with the In-App Purchase key, header `alg`, `kid`, `typ`; claims
/// `iss`, `iat`, `exp`, `aud` `appstoreconnect-v1`, `bid`.
public struct AppStoreTokenSigner: Sendable {
    /// A token's life: Apple refuses more than 60 minutes.
    public static let lifetimeSeconds: Int64 = 20 * 60
    public static let audience = "appstoreconnect-v1"

    private let key: P256.Signing.PrivateKey
    private let encodedHeader: String
    private let issuerID: String
    private let bundleID: String

    /// - Parameter privateKeyPEM: the `.p8` file's text (PKCS#8 or SEC1 PEM, P-256).
    /// - Throws: `AppStoreKeyError.notP256PrivateKey` for anything else.
    public init(privateKeyPEM: String, keyID: String, issuerID: String, bundleID: String) throws(AppStoreKeyError) {
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM) else {
            throw AppStoreKeyError.notP256PrivateKey
        }
        self.key = key
        let header: JSONObject = ["alg": .string("ES256"), "kid": .string(keyID), "typ": .string("JWT")]
        self.encodedHeader = Base64.encodeURL(JSONValue.object(header).serialized())
        self.issuerID = issuerID
        self.bundleID = bundleID
    }

    /// A token issued at `issuedAt` (seconds since 1970) and expiring `lifetimeSeconds` later.
    public func token(issuedAt: Int64) -> String {
        let claims: JSONObject = [
            "iss": .string(issuerID), "iat": .number(String(issuedAt)),
            "exp": .number(String(issuedAt + Self.lifetimeSeconds)),
            "aud": .string(Self.audience), "bid": .string(bundleID),
        ]
        let signingInput = encodedHeader + "." + Base64.encodeURL(JSONValue.object(claims).serialized())
        // ES256 in a JWS is the raw r||s (RFC 7518 section 3.4), not DER.
        let signature = try! key.signature(for: Array(signingInput.utf8))  // P-256 signing does not fail on a valid key
        return signingInput + "." + Base64.encodeURL(signature.rawRepresentation)
    }
}

/// A token signed once and handed out for `reuseSeconds` (well before it
/// expires), so that calls do not each cost an ECDSA signature. Not locked:
/// its owner serialises access.
public struct AppStoreTokenCache: Sendable {
    /// A token is replaced once this old: it then has 10 of its 20 minutes left.
    public static let reuseSeconds: Int64 = 10 * 60

    public let signer: AppStoreTokenSigner
    private var current: (token: String, issuedAt: Int64)?

    public init(signer: AppStoreTokenSigner) {
        self.signer = signer
    }

    /// The token to send at `now` (seconds since 1970).
    public mutating func token(atSeconds now: Int64) -> String {
        if let current, now >= current.issuedAt, now - current.issuedAt < Self.reuseSeconds {
            return current.token
        }
        let token = signer.token(issuedAt: now)
        current = (token, now)
        return token
    }
}

/// Why the In-App Purchase key was refused at start-up.
public enum AppStoreKeyError: Error, Equatable, Sendable {
    case notP256PrivateKey
}
