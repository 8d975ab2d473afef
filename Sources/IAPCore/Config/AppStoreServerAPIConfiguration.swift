/// The App Store Server API settings (`IAP_APPSTORE_*`): where it is and, when
/// configured, the In-App Purchase key its requests are signed with.
public struct AppStoreServerAPIConfiguration: Equatable, Sendable {
    /// `IAP_APPSTORE_KEY_ID`, `IAP_APPSTORE_ISSUER_ID`, `IAP_APPSTORE_PRIVATE_KEY_FILE`:
    /// all three or none. nil: no Server API (`lookup`, `transaction_id` verifies refuse).
    public var credentials: AppStoreCredentials?
    /// `IAP_APPSTORE_API_URL`, default `https://api.storekit.apple.com`; https only.
    public var productionURL: String
    /// `IAP_APPSTORE_SANDBOX_API_URL`, default `https://api.storekit-sandbox.apple.com`; https only.
    public var sandboxURL: String
    /// `IAP_APPSTORE_LOOKUPS_PER_MINUTE`, default 600, allowed 1...100000: the
    /// transaction ids a bare `transaction_id` verify may look up at Apple per
    /// minute, for the whole service (`TransactionLookupBudget`); beyond it, `retry_later`.
    public var lookupsPerMinute: Int

    public static let defaultLookupsPerMinute = 600
    public static let lookupsPerMinuteRange = 1...100_000
    public static let defaultProductionURL = "https://api.storekit.apple.com"
    public static let defaultSandboxURL = "https://api.storekit-sandbox.apple.com"
    static let credentialVariables = ["IAP_APPSTORE_KEY_ID", "IAP_APPSTORE_ISSUER_ID", "IAP_APPSTORE_PRIVATE_KEY_FILE"]

    public init(
        credentials: AppStoreCredentials? = nil, productionURL: String = defaultProductionURL,
        sandboxURL: String = defaultSandboxURL, lookupsPerMinute: Int = defaultLookupsPerMinute
    ) {
        self.credentials = credentials
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.lookupsPerMinute = lookupsPerMinute
    }

    /// The base URL of `environment`'s Server API, without a trailing "/".
    public func baseURL(for environment: AppleEnvironment) -> String {
        let url = environment == .production ? productionURL : sandboxURL
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    /// Reads and validates the `IAP_APPSTORE_*` variables.
    /// - Throws: the first bad variable, named in the error.
    public static func fromEnvironment(_ env: [String: String]) throws(ConfigurationError) -> AppStoreServerAPIConfiguration {
        let reader = EnvironmentReader(env)
        let given = credentialVariables.filter { reader[$0] != nil }
        var credentials: AppStoreCredentials?
        if let missing = credentialVariables.first(where: { reader[$0] == nil }), !given.isEmpty {
            throw ConfigurationError(
                variable: missing,
                problem: "is required with " + given.joined(separator: " and ")
                    + ": the App Store Server API needs the key id, the issuer id and the In-App Purchase key file (.p8)")
        } else if !given.isEmpty {
            credentials = AppStoreCredentials(
                keyID: try reader.token("IAP_APPSTORE_KEY_ID", "must be the In-App Purchase key's id, e.g. 2X9R4HXF34"),
                issuerID: try reader.token(
                    "IAP_APPSTORE_ISSUER_ID", "must be the issuer id from App Store Connect (a UUID)"),
                privateKeyFile: reader["IAP_APPSTORE_PRIVATE_KEY_FILE"]!)
        }
        return AppStoreServerAPIConfiguration(
            credentials: credentials,
            productionURL: try reader.httpsURL("IAP_APPSTORE_API_URL", default: defaultProductionURL),
            sandboxURL: try reader.httpsURL("IAP_APPSTORE_SANDBOX_API_URL", default: defaultSandboxURL),
            lookupsPerMinute: try reader.integer(
                "IAP_APPSTORE_LOOKUPS_PER_MINUTE", default: defaultLookupsPerMinute, in: lookupsPerMinuteRange,
                "must be a whole number of transaction id look-ups per minute from 1 to 100000"))
    }
}

/// Who signs the Server API's tokens: the key's id, the team's issuer id and the
/// path of the `.p8` key (read at start-up; its contents are never logged).
public struct AppStoreCredentials: Equatable, Sendable {
    public var keyID: String
    public var issuerID: String
    public var privateKeyFile: String

    public init(keyID: String, issuerID: String, privateKeyFile: String) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.privateKeyFile = privateKeyFile
    }
}

extension EnvironmentReader {
    /// A required value of printable ASCII without spaces (it goes into a JWT header or claim).
    fileprivate func token(_ name: String, _ rule: String) throws(ConfigurationError) -> String {
        let text = self[name]!
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        else { throw .invalid(name, rule, got: text) }
        return text
    }
}
