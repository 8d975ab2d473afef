/// What authenticates a Pub/Sub push of Google Play's real-time developer
/// notifications (`POST /v1/notifications/google`): the audience configured on
/// the push subscription, the service account it signs as, and where Google's
/// keys are. Unset audience and service account: the route is not configured
/// (503). Which packages' notifications take effect is `GooglePlayConfiguration`'s.
public struct GooglePushConfiguration: Equatable, Sendable {
    /// `IAP_GOOGLE_PUSH_AUDIENCE`: the token's `aud` must equal it.
    public var audience: String
    /// `IAP_GOOGLE_PUSH_SERVICE_ACCOUNT`: the token's `email` must equal it (and be verified).
    public var serviceAccount: String
    /// `IAP_GOOGLE_PUSH_CERTS_URL`: Google's JWKS of the keys that sign push tokens.
    public var certsURL: String

    public static let defaultCertsURL = "https://www.googleapis.com/oauth2/v3/certs"

    public init(audience: String, serviceAccount: String, certsURL: String = defaultCertsURL) {
        self.audience = audience
        self.serviceAccount = serviceAccount
        self.certsURL = certsURL
    }

    /// Nil when neither `IAP_GOOGLE_PUSH_AUDIENCE` nor `IAP_GOOGLE_PUSH_SERVICE_ACCOUNT` is set.
    /// - Throws: one set without the other, or a certs URL that is not `https://`.
    public static func fromEnvironment(_ env: [String: String]) throws(ConfigurationError) -> GooglePushConfiguration? {
        let reader = EnvironmentReader(env)
        let audience = reader["IAP_GOOGLE_PUSH_AUDIENCE"]
        let serviceAccount = reader["IAP_GOOGLE_PUSH_SERVICE_ACCOUNT"]
        guard let audience, let serviceAccount else {
            if audience == nil, serviceAccount == nil { return nil }
            let missing = audience == nil ? "IAP_GOOGLE_PUSH_AUDIENCE" : "IAP_GOOGLE_PUSH_SERVICE_ACCOUNT"
            throw ConfigurationError(
                variable: missing,
                problem: "is required with the other of IAP_GOOGLE_PUSH_AUDIENCE and IAP_GOOGLE_PUSH_SERVICE_ACCOUNT"
                    + " (the push subscription's audience and the service account it pushes as)")
        }
        return GooglePushConfiguration(
            audience: audience, serviceAccount: serviceAccount,
            certsURL: try reader.httpsURL("IAP_GOOGLE_PUSH_CERTS_URL", default: defaultCertsURL))
    }
}
