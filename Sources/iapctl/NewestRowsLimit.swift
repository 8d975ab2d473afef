import ArgumentParser

/// `--limit` of the commands that list the newest rows of a table (`events`, `consumption list`).
struct NewestRowsLimit: ParsableArguments {
    @Option(help: "How many, newest first (1 to 10000).")
    var limit = 50

    func validate() throws {
        guard (1...10_000).contains(limit) else { throw ValidationError("--limit is 1 to 10000") }
    }
}
