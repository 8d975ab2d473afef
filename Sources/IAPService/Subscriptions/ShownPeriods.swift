import IAPCore
import MariaDB

/// The subscription periods a receipt or a signed transaction shows move
/// their chains, in the database transaction that delivers them: a receipt's
/// `in_app` and `latest_receipt_info` (verifyReceipt's, or the purchases of a
/// receipt checked here, with their `expires_date`), a JWS with `expiresDate`.
/// Each period is delivered as any purchase is, exactly once (`Delivery`);
/// this only keeps `subscriptions` in step.
struct ShownPeriods {
    let connection: MariaDBConnection

    /// Applies every period among `transactions` to its chain, one chain at a time in the order of
    /// their ids (two requests showing the same chains lock them in the same order).
    func record(_ transactions: [AppleTransaction], environment: AppleEnvironment, at now: Timestamp) throws {
        let periods = transactions.compactMap { SubscriptionPeriod(transaction: $0, environment: environment.rawValue) }
        let chains = Dictionary(grouping: periods, by: \.originalTransactionID)
        let store = SubscriptionStore(connection: connection)
        for chainID in chains.keys.sorted() {
            try store.apply(chains[chainID, default: []].map(SubscriptionChange.periodSeen), at: now)
        }
    }

    /// Whether any of `transactions` is a subscription period (its delivery then goes one request at a time).
    static func includesPeriods(_ transactions: [AppleTransaction]) -> Bool {
        transactions.contains { SubscriptionPeriod(transaction: $0, environment: "") != nil }
    }
}
