import IAPCore
import MariaDB
internal import SignedData

/// What a notification does to its subscription chain, beside what it does to
/// the transaction it carries (`NotificationApplier`): its period goes to the
/// user of the chain's first delivery, and the chain takes its place in the
/// order of `signedDate` (the table in docs/api.md "Subscriptions").
struct SubscriptionNotice {
    let connection: MariaDBConnection
    let verified: VerifiedNotification

    private var notification: ServerNotification { verified.notification }

    /// nil: a type that changes no chain (`ONE_TIME_CHARGE`, `CONSUMPTION_REQUEST`, ...).
    private var changeKind: SubscriptionChangeKind? {
        SubscriptionChangeKind(notificationType: notification.notificationType, subtype: notification.subtype)
    }

    /// The subscription period it carries; nil when it carries another kind of purchase.
    private var period: SubscriptionPeriod? {
        guard let transaction = verified.transaction, let raw = verified.transactionJSON else { return nil }
        return SubscriptionPeriod(
            transaction: transaction.appleTransaction(raw: raw),
            environment: NotifiedTransactionStore.environment(of: transaction).rawValue)
    }

    /// Its type changes its transaction only as the period of a chain (delivered once when never seen):
    /// it takes no place in that transaction's history of refunds.
    var onlyCarriesPeriod: Bool {
        NotificationKind.isPeriodCarrier(notificationType: notification.notificationType, subtype: notification.subtype)
    }

    /// The order a delivery of its period goes by: the chain's first delivery's (its user receives every
    /// renewal; a new order is made), unless the period's `appAccountToken` names an order of that same
    /// user; the token's order while nothing of the chain was delivered here. Locks the chain's row
    /// first, so that a claim of the chain running at once waits for this period (or this for it).
    func deliveryOrder(tokenOrder: RequestOrder?) throws -> RequestOrder? {
        guard changeKind != nil, let period else { return tokenOrder }
        _ = try SubscriptionStore(connection: connection).locked(period.originalTransactionID)
        guard let first = try ChainClaim(connection: connection).firstOrder(of: period.originalTransactionID) else {
            return tokenOrder
        }
        return tokenOrder?.userID == first.userID ? tokenOrder : first
    }

    /// Applies the notification to its chain (after its transaction's own change is written).
    func applyToChain(at now: Timestamp) throws {
        guard let changeKind else { return }
        let change = SubscriptionChange(
            kind: changeKind, date: notification.signedDate, period: period, renewalInfo: verified.renewalInfo)
        guard change.chainID != nil else { return }
        try SubscriptionStore(connection: connection).apply([change], at: now)
    }
}
