import ArgumentParser
import MariaDB

/// `iapctl prune --older-than 400d`: removes the receipts' and JWS's bytes
/// (`receipts.receipt_data`) past a retention period, as privacy rules ask,
/// and keeps everything else: the SHA-256, the audit rows, Apple's answers,
/// the transactions and orders. Rows whose verification is still open keep
/// their bytes, whatever their age: `retry-pending` needs them to finish a
/// paid purchase.
struct Prune: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove receipt bytes older than a retention period (hashes, audit rows and transactions stay).")

    @Option(name: .customLong("older-than"), help: "The retention period in days, e.g. 400d.")
    var olderThan: String

    /// Rows cleared per statement: short transactions, so a large prune does
    /// not hold locks the service waits on (nor stall a Galera cluster).
    static let chunkRows = 1000

    func validate() throws {
        guard days != nil else { throw ValidationError("--older-than takes days, e.g. 400d (1d to 36500d)") }
    }

    private var days: Int? {
        guard olderThan.hasSuffix("d"), let days = Int(olderThan.dropLast()), (1...36500).contains(days) else {
            return nil
        }
        return days
    }

    func run() throws {
        let connection = try AdminDatabase.connect()
        var cleared: UInt64 = 0
        while true {
            let rows = try connection.execute(
                """
                UPDATE receipts SET receipt_data = NULL
                WHERE received_at < UTC_TIMESTAMP(3) - INTERVAL ? DAY AND receipt_data IS NOT NULL
                  AND (verified_at IS NOT NULL OR retry_final_state IS NOT NULL)
                LIMIT \(Self.chunkRows)
                """,
                [.integer(Int64(days!))]
            ).affectedRows
            cleared += rows
            if rows < UInt64(Self.chunkRows) { break }
        }
        let kept = try connection.execute(
            """
            SELECT COUNT(*) FROM receipts
            WHERE received_at < UTC_TIMESTAMP(3) - INTERVAL ? DAY AND receipt_data IS NOT NULL
            """,
            [.integer(Int64(days!))]
        ).first?[0] ?? "0"
        print("cleared the bytes of \(cleared) receipt row(s) older than \(days!) days; "
            + "\(kept ?? "0") older row(s) keep theirs: their verification is still open")
    }
}
