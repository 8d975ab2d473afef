import Glibc
import IAPCore
import MariaDB
import Synchronization

/// The operator's switches (`settings` table) and the active catalog
/// (`products`), kept in memory and read again every two seconds by a thread
/// of its own, so that a change made in SQL takes effect within the contract's
/// five seconds and no request waits on a query for them.
final class SettingsCache: @unchecked Sendable {
    struct Snapshot: Sendable, Equatable {
        /// The app version in App Review; empty when none, or when the table
        /// holds a placeholder (`ReviewVersionRule`).
        var reviewVersion = ""
        /// Users whose sandbox receipts are honoured.
        var sandboxUsers: [String] = []
        /// Active products by id: catalog price and currency.
        var products: [String: CatalogPrice] = [:]
        /// False until the first successful read: the catalog is unknown then.
        var isLoaded = false
    }

    struct CatalogPrice: Sendable, Equatable {
        let price: Price
        let currency: String
    }

    static let refreshIntervalSeconds: UInt32 = 2
    private let snapshot = Mutex(Snapshot())

    var current: Snapshot { snapshot.withLock { $0 } }

    /// Reads the settings once now; the worker returned keeps refreshing them on its own thread.
    func refresher(from database: Database) -> SettingsRefresher {
        let connection = database.connection()
        refresh(connection)
        return SettingsRefresher(cache: self, connection: connection)
    }

    /// Reads the settings now; on failure the last values stay.
    func refresh(_ connection: MariaDBConnection) {
        do {
            let rows = try connection.execute(
                "SELECT name, value FROM settings WHERE name IN ('review_version', 'sandbox_users')"
            ).rows
            var next = Snapshot(isLoaded: true)
            for row in try connection.execute("SELECT product_id, price, currency FROM products WHERE active = 1").rows {
                if let productID = row[0], let price = row[1].flatMap(Price.init), let currency = row[2] {
                    next.products[productID] = CatalogPrice(price: price, currency: currency)
                }
            }
            for row in rows {
                let value = row[1] ?? ""
                switch row[0] {
                case "review_version":
                    next.reviewVersion = ReviewVersionRule.effective(value.trimmingSpaces)
                case "sandbox_users":
                    next.sandboxUsers = value.split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
                default:
                    break
                }
            }
            snapshot.withLock { $0 = next }
        } catch {
            // Keep the last values; the next refresh tries again.
            Log.event("settings refresh failed: \(error)")
        }
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(self.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
