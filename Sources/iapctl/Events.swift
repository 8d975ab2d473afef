import ArgumentParser
import IAPService
import MariaDB

/// `iapctl events`: the events for the game (docs/events.md) and
/// their webhook state; `redeliver` sends one again.
struct Events: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the events for the game, or send one again.", subcommands: [List.self, Redeliver.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The newest events: id, type, transaction, user, status, attempts, last error (tab-separated).")

        @Flag(help: "Only those the webhook gave up on (72 hours without a 2xx).")
        var failed = false

        @OptionGroup var newest: NewestRowsLimit

        func run() throws {
            let connection = try AdminDatabase.connect()
            let rows = try connection.execute(
                """
                SELECT event_id, type, transaction_id, user_id, status, attempts, last_error FROM events
                WHERE status = 'failed' OR ? = 0 ORDER BY event_id DESC LIMIT ?
                """,
                [.integer(failed ? 1 : 0), .integer(Int64(newest.limit))]
            ).rows
            for row in rows {
                print(row.map { $0 ?? "-" }.joined(separator: "\t"))
            }
        }
    }

    struct Redeliver: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Put a failed or sent event back to pending: the webhook POSTs it again, with 72 hours of retries.")

        @Argument(help: "The event_id.")
        var eventID: UInt64

        func run() throws {
            switch try EventRedelivery.redeliver(eventID: eventID, AdminDatabase.connect()) {
            case .pending:
                print("\(eventID)\tpending")
            case .noSuchEvent:
                throw AdminError("no event \(eventID)")
            case .stillSending(let status):
                throw AdminError("event \(eventID) is \(status): it is still being sent, nothing to redeliver")
            }
        }
    }
}
