/// `IAP_WEBHOOK_URL` and `IAP_WEBHOOK_SECRET`: where the events for the game are
/// pushed, and the key each POST is signed with (API.md "Events for the game").
/// Unset URL: no push; the game pulls `events`.
public struct WebhookConfiguration: Equatable, Sendable {
    /// The game's endpoint; https only (TLS verification is always on).
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
                    problem: "is required with IAP_WEBHOOK_SECRET: the game's https:// endpoint for the events")
            }
            return nil
        }
        let url = try reader.httpsURL("IAP_WEBHOOK_URL", default: "https://game.example.com/iap/events")
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
}

extension WebhookConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "WebhookConfiguration(url: \(url), secret: \(Redacted(secret)))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["url": url, "secret": Redacted(secret).description])
    }
}
