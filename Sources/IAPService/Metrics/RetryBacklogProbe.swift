import MariaDB

/// Reads the retry-pending backlog for `iap_retry_pending_receipts`: the rows
/// `iapctl retry-pending` still has to finish, by the very condition its runs
/// take them by (`PendingReceipts.backlogCondition`): due now or waiting out
/// a backoff, and a receipt being verified right now too, for the moment it
/// takes. A `jws` row left open by a process that died mid-fetch is not one
/// of them: no run will ever take it, and counting it kept the gauge above 0
/// for good. A range over `receipts_retry_due`, whose first two columns are
/// the open rows' conditions.
struct RetryBacklogProbe {
    let connection: MariaDBConnection

    func count() throws(MariaDBError) -> Int {
        let rows = try connection.execute(
            "SELECT COUNT(*) FROM receipts r WHERE \(PendingReceipts.backlogCondition)")
        return rows.first?[0].flatMap { Int($0) } ?? 0
    }
}
