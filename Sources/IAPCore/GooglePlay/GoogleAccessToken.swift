/// An access token from Google's token endpoint, and how long it serves.
public struct GoogleAccessToken: Equatable, Sendable {
    /// Refreshed this long before Google's expiry, so that no call carries a
    /// token that dies on the way.
    public static let refreshMarginSeconds: Int64 = 60

    /// The bearer token (never logged).
    public let token: String
    /// Seconds since 1970 when Google stops taking it.
    public let expiresAt: Int64

    public init(token: String, expiresAt: Int64) {
        self.token = token
        self.expiresAt = expiresAt
    }

    /// Reads the token endpoint's 200 answer, `{"access_token", "expires_in",
    /// "token_type": "Bearer"}`, received at `now`.
    public static func parse(_ body: [UInt8], receivedAt now: Int64) throws(GoogleReplyError) -> GoogleAccessToken {
        guard let value = try? JSONParser.parse(body), let object = value.objectValue else {
            throw GoogleReplyError.notAnObject
        }
        guard let token = object["access_token"]?.stringValue, !token.isEmpty,
            token.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else {
            throw GoogleReplyError(.missingField, field: "access_token")
        }
        guard let text = object["expires_in"]?.scalarText, let lifetime = Int64(text), lifetime > 0 else {
            throw GoogleReplyError(.invalidField, field: "expires_in")
        }
        if let type = object["token_type"]?.stringValue, type.lowercased() != "bearer" {
            throw GoogleReplyError(.invalidField, field: "token_type")
        }
        return GoogleAccessToken(token: token, expiresAt: now + lifetime)
    }

    /// Whether calls made at `now` may still carry it.
    public func isUsable(at now: Int64) -> Bool {
        now < expiresAt - Self.refreshMarginSeconds
    }
}

/// The one access token the whole service shares: kept until a minute before it
/// expires, or until Google refuses it (401), which is worth one new token and
/// one retry of the call. Not locked: its owner serialises access.
public struct GoogleAccessTokenCache: Sendable {
    private var current: GoogleAccessToken?

    public init() {}

    /// The token to send at `now`, or nil when a new one must be fetched.
    public func token(at now: Int64) -> String? {
        guard let current, current.isUsable(at: now) else { return nil }
        return current.token
    }

    public mutating func store(_ token: GoogleAccessToken) {
        current = token
    }

    /// Google answered 401 to a call carrying `token`: forget it, unless a newer
    /// one already replaced it (another call's refresh), which is then used.
    public mutating func refused(_ token: String) {
        if current?.token == token { current = nil }
    }
}
