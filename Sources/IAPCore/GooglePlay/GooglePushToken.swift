import _CryptoExtras

/// Google's public keys for push tokens, from its JWKS
/// (`https://www.googleapis.com/oauth2/v3/certs`): RSA keys by `kid`.
public struct GooglePushKeys: Sendable {
    public let keys: [String: _RSA.Signing.PublicKey]

    public init(keys: [String: _RSA.Signing.PublicKey]) {
        self.keys = keys
    }

    /// Reads a JWKS. Keys that are not RSA signing keys are passed over; a set
    /// without one usable key is an error (nothing could be checked with it).
    public static func parse(_ body: [UInt8]) throws(GoogleReplyError) -> GooglePushKeys {
        guard let value = try? JSONParser.parse(body), let list = value["keys"]?.arrayValue else {
            throw GoogleReplyError(.missingField, field: "keys")
        }
        var keys: [String: _RSA.Signing.PublicKey] = [:]
        for entry in list {
            guard entry["kty"]?.stringValue == "RSA", entry["use"]?.stringValue ?? "sig" == "sig",
                entry["alg"]?.stringValue ?? "RS256" == "RS256", let kid = entry["kid"]?.stringValue,
                let modulus = entry["n"]?.stringValue.flatMap({ Base64.decodeURL(Array($0.utf8)[...]) }),
                let exponent = entry["e"]?.stringValue.flatMap({ Base64.decodeURL(Array($0.utf8)[...]) }),
                let key = try? _RSA.Signing.PublicKey(n: modulus, e: exponent), key.keySizeInBits >= 2048
            else { continue }
            keys[kid] = key
        }
        guard !keys.isEmpty else { throw GoogleReplyError(.invalidField, field: "keys") }
        return GooglePushKeys(keys: keys)
    }
}

/// A Pub/Sub push's OIDC token (`Authorization: Bearer <JWT>`), its signature
/// checked: RS256 only, by the key its `kid` names.
public struct GooglePushToken: Equatable, Sendable {
    public let keyID: String
    public let claims: JSONObject

    public enum Problem: Error, Equatable, Sendable {
        /// Not three base64url parts of JSON objects.
        case malformed
        /// Another algorithm than RS256 (`none`, HS256 with the public key as secret, ...).
        case unsupportedAlgorithm
        /// A `kid` the keys do not have: the caller may fetch the keys again (at most once a minute).
        case unknownKey(String)
        case badSignature
    }

    /// Splits `token` and reads its header: the `kid` to look up, before any key is needed.
    public static func keyID(of token: String) throws(Problem) -> String {
        let (header, _, _, _) = try parts(token)
        guard header["alg"]?.stringValue == "RS256" else { throw .unsupportedAlgorithm }
        guard let kid = header["kid"]?.stringValue, !kid.isEmpty else { throw .malformed }
        return kid
    }

    /// The token's claims, once its signature checks out with `keys`.
    public static func verify(_ token: String, keys: GooglePushKeys) throws(Problem) -> GooglePushToken {
        let kid = try keyID(of: token)
        guard let key = keys.keys[kid] else { throw .unknownKey(String(kid.prefix(64))) }
        let (_, claims, signingInput, signature) = try parts(token)
        let rsaSignature = _RSA.Signing.RSASignature(rawRepresentation: signature)
        guard key.isValidSignature(rsaSignature, for: signingInput, padding: .insecurePKCS1v1_5) else {
            throw .badSignature
        }
        return GooglePushToken(keyID: kid, claims: claims)
    }

    private static func parts(_ token: String) throws(Problem) -> (JSONObject, JSONObject, [UInt8], [UInt8]) {
        let bytes = Array(token.utf8)
        let pieces = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard pieces.count == 3, let headerBytes = Base64.decodeURL(pieces[0]),
            let claimBytes = Base64.decodeURL(pieces[1]), let signature = Base64.decodeURL(pieces[2]),
            let header = (try? JSONParser.parse(headerBytes))?.objectValue,
            let claims = (try? JSONParser.parse(claimBytes))?.objectValue
        else { throw .malformed }
        let signingInput = Array(bytes[..<pieces[1].endIndex])
        return (header, claims, signingInput, signature)
    }
}

/// The claims a push token must carry, checked once its signature is: `iss`
/// Google's accounts, `aud` the audience configured on the subscription
/// (`IAP_GOOGLE_PUSH_AUDIENCE`), `email` the push service account
/// (`IAP_GOOGLE_PUSH_SERVICE_ACCOUNT`) with `email_verified` true, `exp` not
/// passed and `iat` not in the future, each with 60 s of clock skew.
public enum GooglePushClaims {
    public static let issuers = ["accounts.google.com", "https://accounts.google.com"]
    public static let clockSkewSeconds: Int64 = 60

    public enum Problem: String, Error, Equatable, Sendable {
        case issuer, audience, email, emailNotVerified, expired, issuedInFuture, missingTimes
    }

    /// Nil when the claims are acceptable at `now` (seconds since 1970), else the first problem.
    public static func problem(
        _ claims: JSONObject, audience: String, serviceAccount: String, now: Int64
    ) -> Problem? {
        guard let issuer = claims["iss"]?.stringValue, issuers.contains(issuer) else { return .issuer }
        guard audienceMatches(claims["aud"], audience) else { return .audience }
        guard claims["email"]?.stringValue == serviceAccount else { return .email }
        guard claims["email_verified"] == .bool(true) || claims["email_verified"] == .string("true") else {
            return .emailNotVerified
        }
        guard let expires = claims["exp"]?.scalarText.flatMap({ Int64($0) }),
            let issued = claims["iat"]?.scalarText.flatMap({ Int64($0) })
        else { return .missingTimes }
        if expires + clockSkewSeconds <= now { return .expired }
        if issued - clockSkewSeconds > now { return .issuedInFuture }
        return nil
    }

    /// `aud` is a string, or (RFC 7519) an array of them.
    private static func audienceMatches(_ value: JSONValue?, _ audience: String) -> Bool {
        switch value {
        case .string(let text): return text == audience
        case .array(let list): return list.contains(.string(audience))
        default: return false
        }
    }
}
