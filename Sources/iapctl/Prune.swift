import ArgumentParser
import MariaDB

/// `iapctl prune --older-than 400d`: removes the receipts' and JWS's bytes
/// (`receipts.receipt_data`) past a retention period, as privacy rules ask,
/// and keeps everything else: the SHA-256, the audit rows, Apple's answers,
/// the transactions and orders. Rows whose verification is still open keep
/// their bytes, whatever their age: `retry-pending` needs them to finish a
/// paid purchase. So does an old row whose bytes a row within retention, or
/// still open, reads through a pointer (the bytes are stored once): `bytes_in`,
/// or `replay_of` for a replay answered from the database, whose bytes are
/// those of the row it reused (or of the row that one's `bytes_in` names).
/// Such bytes are kept where they are, not moved, and go with the last row
/// that needs them: a replay is a request that posted those bytes again, so
/// their retention runs from it, as a DBA reading `receipt_bytes` for a recent
/// request expects to find them; clearing them would leave the replay's
/// `replay_of` pointing at a row without bytes while the replay is within
/// retention. (No row is deleted, so no pointer ever names a missing row.)
/// The service names only rows of the last 12 hours in a new `bytes_in`
/// (`ReceiptBytesIndex`), so a row prune clears (a day old at least) is never
/// named by a row written while it runs. A replay may name a row of any age:
/// one written after prune cleared that row's bytes (or while it clears them)
/// has none to read, since the service does not store a replay's bytes again.
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
        // One cutoff for every statement: the rows cleared and the rows counted are the same rows.
        guard let cutoff = try connection.execute(
            "SELECT UTC_TIMESTAMP(3) - INTERVAL ? DAY", [.integer(Int64(days!))]
        ).first?[0].flatMap({ $0 }) else { throw AdminError("the database did not say what time it is") }
        var cleared: UInt64 = 0
        // A row keeps its bytes while a row reading them (same sha256, whose index finds it) still needs
        // them: received after the cutoff, or its verification still open. A reader reads them through
        // bytes_in, through replay_of (a replay), or through the bytes_in of the row its replay_of names.
        while true {
            let rows = try connection.execute(
                """
                UPDATE receipts r SET r.receipt_data = NULL
                WHERE r.received_at < ? AND r.receipt_data IS NOT NULL
                  AND (r.verified_at IS NOT NULL OR r.retry_final_state IS NOT NULL)
                  AND NOT EXISTS (
                    SELECT 1 FROM receipts reader LEFT JOIN receipts reused ON reused.receipt_id = reader.replay_of
                    WHERE reader.sha256 = r.sha256
                      AND (reader.bytes_in = r.receipt_id OR reader.replay_of = r.receipt_id
                        OR reused.bytes_in = r.receipt_id)
                      AND (reader.received_at >= ?
                        OR (reader.verified_at IS NULL AND reader.retry_final_state IS NULL)))
                LIMIT \(Self.chunkRows)
                """,
                [.text(cutoff), .text(cutoff)]
            ).affectedRows
            cleared += rows
            if rows < UInt64(Self.chunkRows) { break }
        }
        let kept = try connection.execute(
            """
            SELECT COALESCE(SUM(r.verified_at IS NULL AND r.retry_final_state IS NULL), 0), COUNT(*)
            FROM receipts r WHERE r.received_at < ? AND r.receipt_data IS NOT NULL
            """,
            [.text(cutoff)]
        ).first
        let open = kept?[0].flatMap { Int($0) } ?? 0
        let needed = (kept?[1].flatMap { Int($0) } ?? 0) - open
        print("cleared the bytes of \(cleared) receipt row(s) older than \(days!) days; "
            + "\(open + needed) older row(s) keep theirs: \(open) whose verification is still open, "
            + "\(needed) whose bytes a newer or still open row reads through bytes_in or replay_of")
    }
}
