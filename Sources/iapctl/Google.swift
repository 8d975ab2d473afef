import ArgumentParser
import IAPCore
import IAPService

/// `iapctl google …`: Google Play one-time products, with the same environment
/// as iap-fcgi (`IAP_GOOGLE_PACKAGES`, `IAP_GOOGLE_SERVICE_ACCOUNT_FILE`,
/// `IAP_GOOGLE_API_URL`, `IAP_CA_FILE`, `IAP_DB_*`). Each subcommand is a file
/// of its own (`Google*.swift`), listed here.
struct Google: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Google Play one-time products.",
        subcommands: [VoidedSync.self, Lookup.self])

    /// Google Play's API for one command, or the operator's error: not configured, a bad variable.
    static func query() throws -> GooglePlayQuery {
        do {
            return try GooglePlayQuery(configuration: try ServerAPIAccess.configuration())
        } catch let error as GooglePlayQuery.NotConfigured {
            throw AdminError(error.description)
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
    }
}
