/// The schema's migrations against the files of `sql/`, for `iapctl status`.
public struct MigrationStatus: Equatable, Sendable {
    /// Files of `sql/` not applied yet, in the order `iapctl migrate` applies them.
    public let pending: [String]
    /// Applied migrations with no file in `sql/`: a database migrated by a newer build.
    public let unknown: [String]
    public let appliedCount: Int
    public let fileCount: Int
    /// The folder of migration files could not be read: nothing to compare the database with.
    public let filesUnreadable: Bool
    /// The folder the files were read from, named when it could not be read.
    public let directory: String

    /// `files` is nil when the folder of migration files could not be read: then no applied migration
    /// is called unknown.
    public init(applied: Set<String>, files: [String]?, directory: String = "sql") {
        self.directory = directory
        let fileSet = Set(files ?? [])
        filesUnreadable = files == nil
        pending = (files ?? []).filter { !applied.contains($0) }.sorted()
        unknown = files == nil ? [] : applied.filter { !fileSet.contains($0) }.sorted()
        appliedCount = applied.count
        fileCount = fileSet.count
    }

    /// One line: `6 applied, 6 in sql/: up to date`, or what is pending or unknown.
    public var summary: String {
        if filesUnreadable { return "\(appliedCount) applied; cannot read \(directory) to compare (pass --sql-dir)" }
        var text = "\(appliedCount) applied, \(fileCount) in sql/"
        if pending.isEmpty && unknown.isEmpty { return text + ": up to date" }
        if !pending.isEmpty { text += "; pending: " + pending.joined(separator: ", ") + " (run iapctl migrate)" }
        if !unknown.isEmpty { text += "; applied but not in sql/: " + unknown.joined(separator: ", ") }
        return text
    }
}
