import ArgumentParser
import IAPCore
import IAPService
import MariaDB

/// `iapctl consumption`: the refund-request ledger (docs/events.md "Refund requests"):
/// the requests the stores made (Apple's CONSUMPTION_REQUEST, Google Play's refund
/// reviews) and how they were answered, the users' consent to share consumption
/// with the store, the consumption the game knows, and a pending request sent now
/// rather than after its backoff.
struct Consumption: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Refund requests (CONSUMPTION_REQUEST): list them, record consent and consumption, send one now.",
        subcommands: [List.self, Consent.self, SetConsumed.self, Send.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The newest refund requests: id, transaction (Google's order id for Google Play), user, "
                + "product, reason, status, deadline, attempts, preference sent, outcome, last error, store "
                + "(app_store or google_play; tab-separated).")

        @Flag(help: "Only those still to send.")
        var pending = false

        @OptionGroup var newest: NewestRowsLimit

        func run() throws {
            let connection = try AdminDatabase.connect()
            let rows = try connection.execute(
                """
                SELECT request_id, transaction_id, user_id, product_id, reason, status, deadline_at, attempts,
                  refund_preference_sent, outcome, last_error, store
                FROM consumption_requests WHERE status = 'pending' OR ? = 0 ORDER BY request_id DESC LIMIT ?
                """,
                [.integer(pending ? 1 : 0), .integer(Int64(newest.limit))]
            ).rows
            for row in rows {
                print(row.map { $0 ?? "-" }.joined(separator: "\t"))
            }
        }
    }

    struct Consent: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Record that a user agreed (or, with --withdraw, no longer agrees) that consumption data "
                + "about their purchases may go to Apple.")

        @Argument(help: "The game's user id.")
        var userID: String

        @Flag(help: "Withdraw the consent: their refund requests are no longer answered.")
        var withdraw = false

        func validate() throws {
            guard UserID.isValid(userID) else {
                throw ValidationError("the user id must be 1 to \(UserID.maxScalars) characters without control characters")
            }
        }

        func run() throws {
            let connection = try AdminDatabase.connect()
            guard withdraw else {
                try connection.execute(
                    """
                    INSERT INTO consumption_consent (user_id, consented_at, withdrawn_at) VALUES (?, UTC_TIMESTAMP(3), NULL)
                    ON DUPLICATE KEY UPDATE consented_at = VALUES(consented_at), withdrawn_at = NULL
                    """,
                    [.text(userID)])
                print("\(userID)\tconsented")
                return
            }
            // A consent withdrawn before stays withdrawn at its first date.
            try connection.execute(
                """
                UPDATE consumption_consent SET withdrawn_at = UTC_TIMESTAMP(3)
                WHERE user_id = ? AND (withdrawn_at IS NULL OR withdrawn_at < consented_at)
                """,
                [.text(userID)])
            let known = try connection.execute(
                "SELECT 1 FROM consumption_consent WHERE user_id = ?", [.text(userID)]
            ).first != nil
            print("\(userID)\t\(known ? "withdrawn" : "no consent recorded")")
        }
    }

    struct SetConsumed: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Record how much of a purchase the player used (the consumption table), in milliunits.")

        @Argument(help: "The transaction_id.")
        var transactionID: String

        @Argument(help: "0 (nothing used) to 100000 (all of it).")
        var milli: String

        func validate() throws {
            guard ConsumedMilli.parse(milli) != nil else {
                throw ValidationError(
                    "MILLI is an integer from \(ConsumedMilli.range.lowerBound) (nothing used) to "
                        + "\(ConsumedMilli.range.upperBound) (all of it), not \(milli.prefix(32))")
            }
        }

        func run() throws {
            guard let consumed = ConsumedMilli.parse(milli) else { return }
            let connection = try AdminDatabase.connect()
            guard try connection.execute(
                "SELECT 1 FROM transactions WHERE transaction_id = ?", [.text(transactionID)]
            ).first != nil else {
                throw AdminError("no transaction \(transactionID) in this database")
            }
            try connection.execute(
                """
                INSERT INTO consumption (transaction_id, consumed_milli, updated_at) VALUES (?, ?, UTC_TIMESTAMP(3))
                ON DUPLICATE KEY UPDATE consumed_milli = VALUES(consumed_milli), updated_at = VALUES(updated_at)
                """,
                [.text(transactionID), .integer(Int64(consumed))])
            print("\(transactionID)\t\(consumed)")
        }
    }

    struct Send: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send the refund request of a transaction now, whatever its backoff (as the console's Send now: "
                + "a pending or failed one before Apple's deadline, not one being sent).")

        @Argument(help: "The transaction_id.")
        var transactionID: String

        func run() throws {
            switch try RefundAnswerNow.queue(transactionID: transactionID, AdminDatabase.connect()) {
            case .queued:
                print("\(transactionID)\tpending, due now")
            case .noRequest:
                throw AdminError("no refund request for transaction \(transactionID)")
            case .notSendable(let status):
                throw AdminError(
                    "the refund request of transaction \(transactionID) is \(status): nothing to send "
                        + "(answered, closed, past Apple's deadline, or being sent now)")
            }
        }
    }
}
