import MariaDB

/// Reads the settings again every `SettingsCache.refreshIntervalSeconds`, on a thread of its own
/// with its own database connection, until it is stopped.
final class SettingsRefresher: Worker {
    private let cache: SettingsCache
    private let connection: MariaDBConnection

    init(cache: SettingsCache, connection: MariaDBConnection) {
        self.cache = cache
        self.connection = connection
    }

    var threadName: String { "settings" }

    func run(_ stop: StopRequest) {
        while true {
            stop.sleep(for: .seconds(SettingsCache.refreshIntervalSeconds))
            if stop.isRequested { return }
            cache.refresh(connection)
        }
    }
}
