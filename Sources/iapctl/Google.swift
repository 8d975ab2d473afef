import ArgumentParser

/// `iapctl google …`: Google Play one-time products, with the same environment
/// as iap-fcgi (`IAP_GOOGLE_PACKAGES`, `IAP_GOOGLE_SERVICE_ACCOUNT_FILE`,
/// `IAP_GOOGLE_API_URL`, `IAP_CA_FILE`, `IAP_DB_*`). Each subcommand is a file
/// of its own (`Google*.swift`), listed here.
struct Google: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Google Play one-time products.",
        subcommands: [VoidedSync.self])
}
