import MariaDB

/// What a thread of the service owns: its own MariaDB connection.
final class WorkerContext {
    let connection: MariaDBConnection

    init(database: Database) {
        connection = database.connection()
    }
}
