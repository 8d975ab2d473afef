import MariaDB

/// Reads the retry-pending backlog for `iap_retry_pending_receipts`: receipts
/// whose verification never completed and that `iapctl retry-pending` has not
/// given up or superseded (those it will still try; a receipt being verified
/// right now counts too, for the moment it takes). A range over
/// `receipts_retry_due`, whose first two columns are these conditions.
struct RetryBacklogProbe {
    let connection: MariaDBConnection

    func count() throws(MariaDBError) -> Int {
        let rows = try connection.execute(
            "SELECT COUNT(*) FROM receipts WHERE verified_at IS NULL AND retry_final_state IS NULL")
        return rows.first?[0].flatMap { Int($0) } ?? 0
    }
}
