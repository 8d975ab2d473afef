import IAPCore

/// Google Play's API for one iapctl command, from the same environment as
/// iap-fcgi (`IAP_GOOGLE_*`, `IAP_CA_FILE`): the service's own client, driven by
/// a thread of its own that runs only inside `whileRunning`.
public final class GooglePlayQuery {
    /// Why no question can be asked at all.
    public struct NotConfigured: Error, CustomStringConvertible {
        public let description =
            "Google Play is not configured: set IAP_GOOGLE_PACKAGES and IAP_GOOGLE_SERVICE_ACCOUNT_FILE"
    }

    /// `IAP_GOOGLE_PACKAGES`.
    public let packages: [String]
    private let driver: AppleClient
    let client: GooglePlayClient

    /// - Throws: `NotConfigured`, `ConfigurationError` for a key file that cannot be read, `CurlError`
    ///   when libcurl cannot start.
    public init(configuration: ServiceConfiguration) throws {
        guard let account = try GooglePlayClient.account(configuration.googlePlay) else { throw NotConfigured() }
        packages = configuration.googlePlay.packages
        driver = try AppleClient(endpoints: AppleEndpoints(configuration))
        client = GooglePlayClient(
            configuration: configuration.googlePlay, account: account, caFile: configuration.caFile, driver: driver)
    }

    /// Runs `body`, which asks Google as many questions as it needs, with the client's thread started once
    /// for them all: a stopped client does not start again.
    public func whileRunning<Answer>(_ body: () throws -> Answer) rethrows -> Answer {
        try driver.whileRunning(body)
    }
}
