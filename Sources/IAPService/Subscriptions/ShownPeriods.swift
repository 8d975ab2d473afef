import IAPCore
import MariaDB

/// The subscription periods a receipt or a signed transaction shows move
/// their chains, in the database transaction that delivers them: a receipt's
/// `in_app` and `latest_receipt_info` (verifyReceipt's, or the purchases of a
/// receipt checked here, with their `expires_date`) and verifyReceipt's
/// `pending_renewal_info`, a JWS with `expiresDate`.
/// Each period is delivered as any purchase is, exactly once (`Delivery`);
/// this only keeps `subscriptions` in step.
struct ShownPeriods {
    let connection: MariaDBConnection

    /// Applies every period among `transactions` to its chain, and the renewal info of
    /// `verifyReceiptAnswer` (verifyReceipt's JSON, nil for anything else) to the chains it shows, one
    /// chain at a time in the order of their ids (two requests showing the same chains lock them in the
    /// same order).
    func record(
        _ transactions: [AppleTransaction], verifyReceiptAnswer: [UInt8]?, environment: AppleEnvironment,
        at now: Timestamp
    ) throws {
        let periods = transactions.compactMap { SubscriptionPeriod(transaction: $0, environment: environment.rawValue) }
        guard !periods.isEmpty else { return }
        var changes = periods.map(SubscriptionChange.periodSeen)
        if let verifyReceiptAnswer, let answer = try? JSONParser.parse(verifyReceiptAnswer).objectValue {
            var newest: [String: Int64] = [:]
            for period in periods { newest[period.originalTransactionID] = max(newest[period.originalTransactionID] ?? .min, period.purchaseDate) }
            changes += PendingRenewal.changes(
                in: answer, environment: environment.rawValue, now: now.milliseconds, place: { newest[$0] })
        }
        let chains = Dictionary(grouping: changes) { $0.chainID ?? "" }
        let store = SubscriptionStore(connection: connection)
        for chainID in chains.keys.sorted() {
            try store.apply(chains[chainID, default: []], at: now)
        }
    }

    /// Whether any of `transactions` is a subscription period (its delivery then goes one request at a time).
    static func includesPeriods(_ transactions: [AppleTransaction]) -> Bool {
        transactions.contains { SubscriptionPeriod(transaction: $0, environment: "") != nil }
    }
}
