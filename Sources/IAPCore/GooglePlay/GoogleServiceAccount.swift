import _CryptoExtras

/// A Google service account's JSON key (`IAP_GOOGLE_SERVICE_ACCOUNT_FILE`),
/// read once at start: what the JWT grant is made of. The private key is held
/// only as a signing key and never printed.
public struct GoogleServiceAccount: Sendable {
    public let clientEmail: String
    public let privateKeyID: String
    /// Where grants are exchanged for access tokens (`https://oauth2.googleapis.com/token`).
    public let tokenURI: String
    let privateKey: _RSA.Signing.PrivateKey

    /// Reads the key file's text. Errors name the field, never its value.
    public static func parse(_ bytes: [UInt8]) throws(GoogleServiceAccountError) -> GoogleServiceAccount {
        guard let value = try? JSONParser.parse(bytes), let object = value.objectValue else {
            throw GoogleServiceAccountError(field: nil, problem: "is not a JSON object")
        }
        func string(_ name: String) throws(GoogleServiceAccountError) -> String {
            guard let text = object[name]?.stringValue, !text.isEmpty else {
                throw GoogleServiceAccountError(field: name, problem: "is missing")
            }
            return text
        }
        let tokenURI = try string("token_uri")
        guard tokenURI.hasPrefix("https://") else {
            throw GoogleServiceAccountError(field: "token_uri", problem: "must be an https:// URL")
        }
        guard let key = try? _RSA.Signing.PrivateKey(pemRepresentation: try string("private_key")) else {
            throw GoogleServiceAccountError(
                field: "private_key", problem: "is not an RSA private key (PEM) of 2048 bits or more")
        }
        return GoogleServiceAccount(
            clientEmail: try string("client_email"), privateKeyID: try string("private_key_id"), tokenURI: tokenURI,
            privateKey: key)
    }
}

/// Why the service account key was refused at start.
public struct GoogleServiceAccountError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The key's field at fault; nil when the file is not a key at all.
    public let field: String?
    public let problem: String

    public var description: String {
        field.map { "the key's \($0) \(problem)" } ?? "the key file \(problem)"
    }
}

/// The JWT grant of the OAuth 2.0 service account flow (RFC 7523): RS256,
/// header `kid` = the key's `private_key_id`, claims `iss` = `client_email`,
/// `scope` the Android Publisher API, `aud` = `token_uri`, `iat`, and `exp` an
/// hour later (Google's most). Exchanged at `token_uri` for an access token.
public struct GoogleGrantSigner: Sendable {
    public static let scope = "https://www.googleapis.com/auth/androidpublisher"
    public static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    public static let lifetimeSeconds: Int64 = 3600

    public let account: GoogleServiceAccount
    private let encodedHeader: String

    public init(account: GoogleServiceAccount) {
        self.account = account
        let header: JSONObject = ["alg": .string("RS256"), "typ": .string("JWT"), "kid": .string(account.privateKeyID)]
        self.encodedHeader = Base64.encodeURL(JSONValue.object(header).serialized())
    }

    /// The grant's claims for a grant made at `issuedAt` (seconds since 1970).
    public func claims(issuedAt: Int64) -> JSONObject {
        [
            "iss": .string(account.clientEmail), "scope": .string(Self.scope), "aud": .string(account.tokenURI),
            "iat": .int(issuedAt), "exp": .int(issuedAt + Self.lifetimeSeconds),
        ]
    }

    /// The signed grant (compact JWS).
    public func assertion(issuedAt: Int64) -> String {
        let encodedClaims = Base64.encodeURL(JSONValue.object(claims(issuedAt: issuedAt)).serialized())
        let signingInput = encodedHeader + "." + encodedClaims
        // RS256 is RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 section 3.3); signing with a valid key does not fail.
        let signature = try! account.privateKey.signature(for: Array(signingInput.utf8), padding: .insecurePKCS1v1_5)
        return signingInput + "." + Base64.encodeURL(signature.rawRepresentation)
    }

    /// The token request's form body (`application/x-www-form-urlencoded`). A
    /// JWS is base64url and dots, which need no escaping in a form.
    public func tokenRequestBody(issuedAt: Int64) -> String {
        "grant_type=" + Self.grantType.formEscaped + "&assertion=" + assertion(issuedAt: issuedAt)
    }
}

extension String {
    /// Form escaping of the few characters a grant type has (`:`).
    fileprivate var formEscaped: String {
        var escaped = ""
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                escaped += "%" + lowercaseHex([byte]).uppercased()
            }
        }
        return escaped
    }
}
