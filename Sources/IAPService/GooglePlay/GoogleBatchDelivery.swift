import IAPCore
import MariaDB

/// `GooglePurchaseDelivery` for several purchases at once, inside the caller's database
/// transaction, with one statement per table: the rows, orders and `delivered` events by
/// `BatchDelivery` (as Apple's), then for all of them at once what makes them Google's (store
/// `google_play`, the purchase token and its SHA-256) and the consumes or acknowledges owed to
/// Google (`google_finishes`). A purchase whose token is stored already (delivered, or held
/// `unclaimed` by a push), or named twice in the batch, is left out for `GooglePurchaseDelivery`
/// one by one, which handles every case; so is one `BatchDelivery` leaves out.
struct GoogleBatchDelivery {
    let connection: MariaDBConnection
    /// The catalog in memory: the price of the orders made on delivery.
    let catalog: [String: SettingsCache.CatalogPrice]

    /// By purchase, its answer, or nil when it was left out and nothing of it is written.
    func deliver(_ inputs: [GooglePurchaseDelivery.Input]) throws -> [TransactionAnswer?] {
        var answers = [TransactionAnswer?](repeating: nil, count: inputs.count)
        guard inputs.count > 1 else { return answers }
        let hashes = inputs.map { GoogleTransactionID.tokenSHA256($0.request.purchaseToken) }
        let stored = try storedTokens(hashes)
        var named: Set<String> = []
        let joining = inputs.indices.filter { named.insert(hashes[$0]).inserted && !stored.contains(hashes[$0]) }
        let now = Timestamp.now()
        let recorded = try BatchDelivery(connection: connection, catalog: catalog).record(
            joining.map { index in
                let input = inputs[index]
                return BatchDelivery.Item(record: nil, delivery: (
                    BatchPlan.Member(
                        receiptID: input.receiptID, userID: input.userID, orderID: input.orderID,
                        transactions: ReceiptTransactions(
                            inApp: [GooglePurchaseDelivery.transaction(input)], latestReceiptInfo: [],
                            namedTransactionID: nil)),
                    input.deliverable.environment))
            },
            at: now)
        var delivered: [(input: GooglePurchaseDelivery.Input, tokenSHA256: String, transactionID: String)] = []
        for (index, answer) in zip(joining, recorded) {
            guard let answer = answer?.first else { continue }
            answers[index] = answer
            if answer.state == .delivered {
                delivered.append((inputs[index], hashes[index], answer.transaction.transactionID))
            }
        }
        guard !delivered.isEmpty else { return answers }
        try markGooglePlay(delivered.map { ($0.transactionID, $0.input.request.purchaseToken, $0.tokenSHA256) })
        for chunk in RowChunks.padded(delivered.map { SQLValue.text($0.transactionID) }) {
            try connection.execute(
                "UPDATE events SET store = 'google_play' WHERE transaction_id IN (\(SQLPlaceholders.list(chunk.count)))",
                chunk)
        }
        try owe(delivered.map { ($0.input, $0.transactionID) }, at: now)
        return answers
    }

    /// Which of `hashes` a stored transaction holds, locked until the database transaction ends.
    private func storedTokens(_ hashes: [String]) throws(MariaDBError) -> Set<String> {
        var stored: Set<String> = []
        for chunk in RowChunks.padded(hashes.map(SQLValue.text)) {
            for row in try connection.execute(
                """
                SELECT purchase_token_sha256 FROM transactions
                WHERE purchase_token_sha256 IN (\(SQLPlaceholders.list(chunk.count))) FOR UPDATE
                """, chunk
            ).rows {
                if let hash = row[0] { stored.insert(hash) }
            }
        }
        return stored
    }

    /// The rows `BatchDelivery` wrote are Google's, each with its purchase token.
    private func markGooglePlay(
        _ rows: [(transactionID: String, purchaseToken: String, tokenSHA256: String)]
    ) throws(MariaDBError) {
        for chunk in RowChunks.padded(rows) {
            let cases = Array(repeating: "WHEN ? THEN ?", count: chunk.count).joined(separator: " ")
            try connection.execute(
                """
                UPDATE transactions SET store = 'google_play',
                  purchase_token = CASE transaction_id \(cases) END,
                  purchase_token_sha256 = CASE transaction_id \(cases) END
                WHERE transaction_id IN (\(SQLPlaceholders.list(chunk.count)))
                """,
                chunk.flatMap { [SQLValue.text($0.transactionID), .text($0.purchaseToken)] }
                    + chunk.flatMap { [SQLValue.text($0.transactionID), .text($0.tokenSHA256)] }
                    + chunk.map { .text($0.transactionID) }
            ).requireRows(Set(chunk.map(\.transactionID)).count, "UPDATE transactions store google_play")
        }
    }

    /// The consume (a consumable product, `products.type`: consuming also acknowledges) or the
    /// acknowledge (any other type) owed to Google for each, due at once, before Google's 3 days.
    private func owe(
        _ delivered: [(input: GooglePurchaseDelivery.Input, transactionID: String)], at now: Timestamp
    ) throws(MariaDBError) {
        let types = try productTypes(Array(Set(delivered.map(\.input.request.productID))))
        for rows in RowChunks.exactChunks(delivered) {
            try connection.execute(
                """
                INSERT INTO google_finishes (transaction_id, action, package_name, created_at, deadline_at, next_attempt_at)
                VALUES \(SQLPlaceholders.rows(rows.count, columns: 6))
                ON DUPLICATE KEY UPDATE transaction_id = google_finishes.transaction_id
                """,
                rows.flatMap { input, transactionID -> [SQLValue] in
                    let purchasedMs = input.purchase.completionTimeMilliseconds ?? now.milliseconds
                    let type = ProductType(stored: types[input.request.productID] ?? nil)
                    let action: GoogleFinishAction = type.isConsumedAtGoogle ? .consume : .acknowledge
                    return [
                        .text(transactionID), .text(action.rawValue), .text(input.request.packageName), .text(now.sql),
                        .text(AppleDate.sqlDateTime(ms: purchasedMs + GooglePurchaseDelivery.acknowledgeWithinMs)),
                        .text(now.sql),
                    ]
                })
        }
    }

    /// `products.type` by product id (a product not there: absent).
    private func productTypes(_ productIDs: [String]) throws(MariaDBError) -> [String: String?] {
        var types: [String: String?] = [:]
        for chunk in RowChunks.padded(productIDs.map(SQLValue.text)) {
            for row in try connection.execute(
                "SELECT product_id, type FROM products WHERE product_id IN (\(SQLPlaceholders.list(chunk.count)))", chunk
            ).rows {
                if let productID = row[0] { types[productID] = row[1] }
            }
        }
        return types
    }
}
