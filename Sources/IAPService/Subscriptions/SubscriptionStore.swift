import IAPCore
import MariaDB

/// The `subscriptions` table: each chain's state, changed inside the caller's
/// database transaction by whatever changed it (a notification, a receipt or
/// JWS showing a period, a status look-up), in the order of the changes' dates
/// (`SubscriptionHistory`). A chain takes the user of its first period
/// delivered here; until then it is unclaimed, and the game hears of it when
/// it is claimed. Locks: the chain's row after the transactions' rows, as
/// every caller takes them.
struct SubscriptionStore {
    let connection: MariaDBConnection

    /// A `subscriptions` row.
    struct Chain {
        let state: SubscriptionState
        /// nil: unclaimed.
        let userID: String?
    }

    /// The chain, locked until the database transaction ends.
    func locked(_ originalTransactionID: String) throws(MariaDBError) -> Chain? {
        guard let row = try connection.execute(
            """
            SELECT product_id, environment, status, \(Self.ms("expires_at")), \(Self.ms("grace_period_expires_at")),
              auto_renew, auto_renew_product_id, expiration_intent, latest_transaction_id,
              \(Self.ms("latest_purchase_at")), \(Self.ms("last_signed_date")), user_id
            FROM subscriptions WHERE original_transaction_id = ? FOR UPDATE
            """,
            [.text(originalTransactionID)]
        ).first, let productID = row[0], let environment = row[1], let status = row[2].flatMap(SubscriptionStatus.init),
            let expiresAt = row[3].flatMap({ Int64($0) }), let latestID = row[8],
            let latestPurchase = row[9].flatMap({ Int64($0) })
        else { return nil }
        return Chain(
            state: SubscriptionState(
                originalTransactionID: originalTransactionID, productID: productID, environment: environment,
                status: status, expiresAt: expiresAt, gracePeriodExpiresAt: row[4].flatMap { Int64($0) },
                autoRenews: row[5].map { $0 != "0" }, autoRenewProductID: row[6],
                expirationIntent: row[7].map(ExpirationIntent.init(rawValue:)), latestTransactionID: latestID,
                latestPurchaseDate: latestPurchase, lastSignedDate: row[10].flatMap { Int64($0) }),
            userID: row[11])
    }

    /// Applies `changes` (all of one chain) in their dates' order: writes the row when it changes,
    /// gives an unclaimed chain the user of its first delivered period (delivering its unclaimed
    /// periods to that user), and tells the game with one `subscription_changed` event when the
    /// chain's status, expiry or auto-renewal changed or it was claimed. Nil when no change names a chain.
    @discardableResult
    func apply(_ changes: [SubscriptionChange], at now: Timestamp) throws -> SubscriptionOutcome? {
        guard let chainID = changes.lazy.compactMap(\.chainID).first else { return nil }
        let stored = try locked(chainID)
        let outcome = SubscriptionHistory.outcome(of: changes, from: stored?.state)
        var state = stored?.state
        var notifiesGame = false
        if case .changed(let next, let notifies) = outcome {
            try write(next, isNew: stored == nil, at: now)
            (state, notifiesGame) = (next, notifies)
        }
        guard let state else { return outcome }
        var userID = stored?.userID
        if userID == nil, let owner = try ChainClaim(connection: connection).claim(chainID, at: now) {
            userID = owner
            notifiesGame = true
        }
        if notifiesGame, let userID {
            let occurredAt = state.lastSignedDate ?? now.milliseconds
            try SubscriptionEvent(connection: connection).record(state, userID: userID, occurredAtMs: occurredAt, at: now)
        }
        return outcome
    }

    private func write(_ state: SubscriptionState, isNew: Bool, at now: Timestamp) throws(MariaDBError) {
        let columns: [SQLValue] = [
            .text(state.productID), .text(state.environment), .text(state.status.rawValue),
            .text(AppleDate.sqlDateTime(ms: state.expiresAt)),
            .optional(state.gracePeriodExpiresAt.map(AppleDate.sqlDateTime)),
            state.autoRenews.map { .integer($0 ? 1 : 0) } ?? .null, .optional(state.autoRenewProductID),
            .optional(state.expirationIntent.map { String($0.rawValue.prefix(32)) }), .text(state.latestTransactionID),
            .text(AppleDate.sqlDateTime(ms: state.latestPurchaseDate)),
            .optional(state.lastSignedDate.map(AppleDate.sqlDateTime)), .text(now.sql),
        ]
        if isNew {
            try connection.execute(
                """
                INSERT INTO subscriptions (product_id, environment, status, expires_at, grace_period_expires_at,
                  auto_renew, auto_renew_product_id, expiration_intent, latest_transaction_id, latest_purchase_at,
                  last_signed_date, updated_at, created_at, original_transaction_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                columns + [.text(now.sql), .text(state.originalTransactionID)]
            ).requireRows(1, "INSERT INTO subscriptions")
        } else {
            try connection.execute(
                """
                UPDATE subscriptions SET product_id = ?, environment = ?, status = ?, expires_at = ?,
                  grace_period_expires_at = ?, auto_renew = ?, auto_renew_product_id = ?, expiration_intent = ?,
                  latest_transaction_id = ?, latest_purchase_at = ?, last_signed_date = ?, updated_at = ?
                WHERE original_transaction_id = ?
                """,
                columns + [.text(state.originalTransactionID)]
            ).requireRows(1, "UPDATE subscriptions")
        }
    }

    /// A DATETIME(3) column as ms since 1970 UTC (the session's time zone is UTC).
    private static func ms(_ column: String) -> String {
        "CAST(ROUND(UNIX_TIMESTAMP(\(column)) * 1000) AS SIGNED)"
    }
}
