import IAPCore
import MariaDB

/// What an `iapctl` sync with Apple works with (`NotificationSync`,
/// `SubscriptionSync`): the App Store Server API, a connection to this
/// database, and the service's configuration, so that what Apple says is
/// checked (bundle ids, sandbox policy) and applied as the service would.
public struct AppleSyncContext {
    let query: ServerAPIQuery
    let connection: MariaDBConnection
    let configuration: ServiceConfiguration

    public init(query: ServerAPIQuery, connection: MariaDBConnection, configuration: ServiceConfiguration) {
        self.query = query
        self.connection = connection
        self.configuration = configuration
    }
}
