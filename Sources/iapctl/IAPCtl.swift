import ArgumentParser
import IAPCore

/// The operators' tool: schema migrations, the review switch, the sandbox
/// users and the product catalog. It reads the same `IAP_DB_*` variables as
/// iap-fcgi.
@main
struct IAPCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "iapctl",
        abstract: "Administer an iap-fcgi database.",
        discussion: "Connects with IAP_DB_HOST, IAP_DB_PORT, IAP_DB_SOCKET, IAP_DB_USER, IAP_DB_PASSWORD, IAP_DB_NAME, from the environment or the env file IAP_ENV_FILE (default /etc/iap-fcgi/iap-fcgi.env, read as systemd reads it).",
        version: "iapctl \(ServiceVersion.current)",
        subcommands: [
            Migrate.self, ReviewVersion.self, SandboxUsers.self, Products.self, RetryPending.self, Lookup.self,
            TransactionInfo.self, Notifications.self, Events.self, Consumption.self, Prune.self, Status.self, Staff.self,
            CheckReceipt.self, Google.self, Subscriptions.self,
        ])

    /// The env file's variables first (`OperatorEnvironment`), then the command.
    static func main() {
        OperatorEnvironment.load()
        main(nil)
    }
}
