import IAPCore
import MariaDB

/// Opens MariaDB connections for the service's threads; each thread owns one.
struct Database: Sendable {
    let configuration: DatabaseConfiguration

    func connection() -> MariaDBConnection {
        MariaDBConnection(options: ConnectionOptions(configuration))
    }
}

extension ConnectionOptions {
    /// The options of `IAP_DB_*`, shared by the service and iapctl.
    public init(_ configuration: DatabaseConfiguration) {
        self.init(
            addresses: configuration.addresses.map { ServerAddress(host: $0.host, port: $0.port) },
            socket: configuration.socket,
            user: configuration.user, password: configuration.password, database: configuration.name)
        switch configuration.tls {
        case .off: tls = .off
        case .verify: tls = .verify(caFile: configuration.caFile)
        }
    }
}

extension MariaDBError {
    /// How a route answers this failure (`DatabaseFailureAnswer`).
    var apiError: APIError {
        DatabaseFailureAnswer.apiError(errorNumber: code, serverUnavailable: isServerUnavailable)
    }
}

/// The current time in the two forms the tables and the answers use.
struct Timestamp {
    let milliseconds: Int64

    static func now() -> Timestamp {
        Timestamp(milliseconds: SystemClock.wallMilliseconds())
    }

    /// `2026-11-22 08:00:00.123`, for DATETIME(3) columns (UTC).
    var sql: String { AppleDate.sqlDateTime(ms: milliseconds) }
    /// `2026-11-22T08:00:00Z`, for answers.
    var iso: String { AppleDate.iso8601(ms: milliseconds) }
}
