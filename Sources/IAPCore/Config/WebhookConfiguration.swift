/// `IAP_WEBHOOK_URL` and `IAP_WEBHOOK_SECRET`: where the events for the game are
/// pushed, and the key each POST is signed with (docs/events.md "Push: the webhook").
/// Unset URL: no push; the game pulls `events`.
public struct WebhookConfiguration: Equatable, Sendable {
    /// The game's endpoint: `https://` (TLS verification is always on), or
    /// `http://` to a loopback host (the game's PHP on the same machine).
    public var url: String
    /// The HMAC-SHA256 key of `X-IAP-Signature`. Never logged.
    public var secret: String

    /// A shorter secret is refused: it is the only thing that makes a POST the game's receiver trusts.
    public static let shortestSecret = 16

    public init(url: String, secret: String) {
        self.url = url
        self.secret = secret
    }

    /// Reads the two variables; nil when `IAP_WEBHOOK_URL` is unset or empty.
    /// - Throws: a bad URL, a secret missing or too short (never quoting it).
    public static func fromEnvironment(_ env: [String: String]) throws(ConfigurationError) -> WebhookConfiguration? {
        let reader = EnvironmentReader(env)
        guard reader["IAP_WEBHOOK_URL"] != nil else {
            if reader["IAP_WEBHOOK_SECRET"] != nil {
                throw ConfigurationError(
                    variable: "IAP_WEBHOOK_URL",
                    problem: "is required with IAP_WEBHOOK_SECRET: the game's endpoint for the events"
                        + " (https://, or http:// on a loopback host)")
            }
            return nil
        }
        let url = try endpoint(reader)
        guard let secret = reader["IAP_WEBHOOK_SECRET"] else {
            throw ConfigurationError(
                variable: "IAP_WEBHOOK_SECRET",
                problem: "is required with IAP_WEBHOOK_URL: the key the game checks each POST's X-IAP-Signature with")
        }
        guard secret.count >= shortestSecret else {
            throw ConfigurationError(
                variable: "IAP_WEBHOOK_SECRET", problem: "must be at least \(shortestSecret) characters long")
        }
        return WebhookConfiguration(url: url, secret: secret)
    }

    /// `IAP_WEBHOOK_URL`: `https://`, or `http://` when `isLoopbackHTTP` says so.
    private static func endpoint(_ reader: EnvironmentReader) throws(ConfigurationError) -> String {
        let name = "IAP_WEBHOOK_URL"
        guard let text = reader[name], text.lowercased().hasPrefix("http://") else {
            return try reader.httpsURL(name, default: "https://game.example.com/iap/events")
        }
        guard isLoopbackHTTP(text) else {
            throw .invalid(
                name, "must be an https:// URL; http:// only to a loopback host (127.0.0.0/8, [::1], localhost),"
                    + " e.g. http://127.0.0.1:8080/iap/events", got: text)
        }
        return text
    }

    /// Whether `url` is `http://` to this machine, judged as strictly as a
    /// client could read it: the scheme in any case; printable ASCII only; no
    /// user info (`http://user@127.0.0.1@evil.com` names evil.com to some
    /// parsers); the host, up to the first `/`, `?` or `#`, exactly `localhost`
    /// (any case), an IPv4 address of 127.0.0.0/8 in four decimal parts, or
    /// `[::1]` (an IPv6 loopback in brackets); then at most `:` and a port.
    /// `http://127.0.0.1.evil.com/` and `http://localhost.evil.com` are not.
    public static func isLoopbackHTTP(_ url: String) -> Bool {
        let scheme = "http://".utf8
        let bytes = Array(url.utf8)
        guard bytes.count > scheme.count, bytes.allSatisfy({ (0x21...0x7E).contains($0) }),
            String(decoding: bytes[..<scheme.count], as: UTF8.self).lowercased() == "http://"
        else { return false }
        let rest = bytes[scheme.count...]
        let authority = rest[..<(rest.firstIndex { "/?#".utf8.contains($0) } ?? rest.endIndex)]
        guard !authority.contains(UInt8(ascii: "@")) else { return false }
        let host: ArraySlice<UInt8>
        let afterHost: ArraySlice<UInt8>
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return false }
            host = authority[(authority.startIndex + 1)..<close]
            afterHost = authority[(close + 1)...]
            guard host.contains(UInt8(ascii: ":")) else { return false }  // brackets hold IPv6 only
        } else {
            let colon = authority.firstIndex(of: UInt8(ascii: ":")) ?? authority.endIndex
            host = authority[..<colon]
            afterHost = authority[colon...]
        }
        guard afterHost.isEmpty || (afterHost.first == UInt8(ascii: ":") && isPort(afterHost.dropFirst()))
        else { return false }
        let hostText = String(decoding: host, as: UTF8.self)
        return hostText.lowercased() == "localhost" || IPAddress(hostText)?.isLoopback == true
    }

    /// 1 to 65535 in decimal digits.
    private static func isPort(_ text: ArraySlice<UInt8>) -> Bool {
        guard (1...5).contains(text.count), text.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let port = Int(String(decoding: text, as: UTF8.self))
        else { return false }
        return (1...65535).contains(port)
    }
}

extension WebhookConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "WebhookConfiguration(url: \(url), secret: \(Redacted(secret)))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["url": url, "secret": Redacted(secret).description])
    }
}
