import ArgumentParser
import Glibc
import IAPService
import MariaDB

/// `iapctl migrate`: applies the pending files of `sql/` in name order and
/// records each in `schema_migrations`, the only way the schema changes.
struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply the pending SQL migrations.")

    @Option(help: ArgumentHelp(SQLDirectory.help))
    var sqlDir: String?

    func run() throws {
        let connection = try AdminDatabase.connect(multipleStatements: true)
        try connection.executeScript(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
              version    VARCHAR(255) CHARACTER SET ascii NOT NULL COMMENT 'File name of the migration in sql/',
              applied_at DATETIME(3) NOT NULL COMMENT 'UTC',
              PRIMARY KEY (version)
            ) ENGINE=InnoDB COMMENT='Migrations applied by iapctl migrate'
            """)
        try connection.executeScript(ClusterLock.createTable)
        // Two operators (or two deploys) migrating at once, on one server or two Galera nodes, would
        // apply a file twice.
        let lock = ClusterLock(connection: connection, name: "migrate", leaseSeconds: 600)
        if try !lock.acquire() {
            // A line the operator (and the Galera test) sees before the wait.
            print("another migration holds the lock (cluster_locks, name migrate): waiting up to 60 s")
            fflush(nil)  // every output stream: `stdout` is not concurrency-safe to name
            guard try lock.acquire(waitingUpTo: 60) else {
                throw AdminError("another migration holds the lock (cluster_locks, name migrate)")
            }
        }
        try lock.whileHeld { try applyPending(connection) }
    }

    /// Applies the files of `sqlDir` that `schema_migrations` does not list, in name order.
    private func applyPending(_ connection: MariaDBConnection) throws {
        let sqlDir = SQLDirectory.resolve(sqlDir)
        let applied = Set(try connection.execute("SELECT version FROM schema_migrations").rows.compactMap { $0[0] })
        var count = 0
        for file in try Self.files(in: sqlDir) where !applied.contains(file) {
            let sql = try String(readingFile: "\(sqlDir)/\(file)")
            do {
                try connection.executeScript(sql)
            } catch {
                throw AdminError("\(file) failed: \(error.debugDescription)")
            }
            try connection.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?, UTC_TIMESTAMP(3))", [.text(file)])
            print("applied \(file)")
            count += 1
        }
        print(count == 0 ? "schema is up to date" : "\(count) migration(s) applied")
    }

    /// The `.sql` files of `sqlDir`, in the order they apply.
    static func files(in sqlDir: String) throws -> [String] {
        guard let directory = opendir(sqlDir) else { throw AdminError("cannot read \(sqlDir)") }
        defer { closedir(directory) }
        var files: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".sql") { files.append(name) }
        }
        return files.sorted()
    }
}

extension String {
    /// The whole file as UTF-8 text (not named `contentsOfFile`: Foundation, which SignedData
    /// brings into the build, has an initializer of that name).
    init(readingFile path: String) throws {
        guard let file = fopen(path, "rb") else { throw AdminError("cannot open \(path)") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        self = String(decoding: bytes, as: UTF8.self)
    }
}
