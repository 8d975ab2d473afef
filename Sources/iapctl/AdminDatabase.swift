import ArgumentParser
import IAPCore
import IAPService
import MariaDB

/// The database connection of one iapctl run, from the `IAP_DB_*` variables.
enum AdminDatabase {
    static func connect(multipleStatements: Bool = false) throws -> MariaDBConnection {
        let configuration: DatabaseConfiguration
        do {
            configuration = try DatabaseConfiguration.fromEnvironment(ProcessEnvironment.variables())
        } catch {
            throw ValidationError(error.description)
        }
        var options = ConnectionOptions(configuration)
        options.connectTimeoutSeconds = 5
        options.allowsMultipleStatements = multipleStatements
        let connection = MariaDBConnection(options: options)
        do {
            try connection.open()
        } catch {
            throw AdminError("cannot connect to MariaDB at \(configuration): \(error.debugDescription)")
        }
        return connection
    }
}

/// A failure to report to the operator, with exit status 1.
struct AdminError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
