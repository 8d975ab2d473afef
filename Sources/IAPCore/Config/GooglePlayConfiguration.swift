/// Google Play's settings (`IAP_GOOGLE_*` of the purchase routes): which apps'
/// purchases are honoured, the service account the Play Developer API is
/// called with, where that API is, and how long one call to it may take. Both
/// `IAP_GOOGLE_PACKAGES` and `IAP_GOOGLE_SERVICE_ACCOUNT_FILE`, or neither:
/// without them every Google route answers 503 `google_not_configured`.
public struct GooglePlayConfiguration: Equatable, Sendable {
    /// `IAP_GOOGLE_PACKAGES`: the package names whose purchases are honoured,
    /// comma-separated (items trimmed, empty items dropped). Empty: not configured.
    public var packages: [String]
    /// `IAP_GOOGLE_SERVICE_ACCOUNT_FILE`: the service account's JSON key (read at
    /// start-up; its contents are never logged). nil: not configured.
    public var serviceAccountFile: String?
    /// `IAP_GOOGLE_API_URL`, default `https://androidpublisher.googleapis.com`; https only.
    public var apiURL: String
    /// `IAP_GOOGLE_TIMEOUT_MS`: one conversation with Google (the token, the
    /// call, its retries), in milliseconds. Default 15000, allowed 100...120000.
    public var timeoutMs: Int

    public static let defaultAPIURL = "https://androidpublisher.googleapis.com"
    public static let defaultTimeoutMs = 15000
    public static let timeoutMsRange = 100...120_000

    public init(
        packages: [String] = [], serviceAccountFile: String? = nil, apiURL: String = defaultAPIURL,
        timeoutMs: Int = defaultTimeoutMs
    ) {
        self.packages = packages
        self.serviceAccountFile = serviceAccountFile
        self.apiURL = apiURL
        self.timeoutMs = timeoutMs
    }

    /// Whether the Google routes serve: packages and a key are both given.
    public var isConfigured: Bool { !packages.isEmpty && serviceAccountFile != nil }

    /// The API's base URL without a trailing "/".
    public var baseURL: String { apiURL.hasSuffix("/") ? String(apiURL.dropLast()) : apiURL }

    /// Reads and validates the variables.
    /// - Throws: the first bad variable, named in the error.
    public static func fromEnvironment(_ env: [String: String]) throws(ConfigurationError) -> GooglePlayConfiguration {
        let reader = EnvironmentReader(env)
        let packages = (reader["IAP_GOOGLE_PACKAGES"] ?? "").split(separator: ",")
            .map { String($0.trimmingSpaces) }.filter { !$0.isEmpty }
        if let bad = packages.first(where: { !GoogleVerifyRequest.isPackageName($0) }) {
            throw .invalid(
                "IAP_GOOGLE_PACKAGES",
                "must be package names (letters, digits and _, dot-separated, e.g. com.example.game), comma-separated",
                got: bad)
        }
        let keyFile = reader["IAP_GOOGLE_SERVICE_ACCOUNT_FILE"]
        if !packages.isEmpty, keyFile == nil {
            throw ConfigurationError(
                variable: "IAP_GOOGLE_SERVICE_ACCOUNT_FILE",
                problem: "is required with IAP_GOOGLE_PACKAGES: the service account's JSON key the Play Developer API is called with")
        }
        if packages.isEmpty, keyFile != nil {
            throw ConfigurationError(
                variable: "IAP_GOOGLE_PACKAGES",
                problem: "is required with IAP_GOOGLE_SERVICE_ACCOUNT_FILE: the package names whose purchases are honoured, comma-separated")
        }
        return GooglePlayConfiguration(
            packages: packages, serviceAccountFile: keyFile,
            apiURL: try reader.httpsURL("IAP_GOOGLE_API_URL", default: defaultAPIURL),
            timeoutMs: try reader.integer(
                "IAP_GOOGLE_TIMEOUT_MS", default: defaultTimeoutMs, in: timeoutMsRange,
                "must be a whole number of milliseconds from 100 to 120000"))
    }
}
