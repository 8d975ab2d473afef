/// One thing that arrived about a chain, and the state it leads to. Apple's
/// notifications do not arrive in order, so each change takes its place by its
/// date: one dated before the last change applied to the chain changes nothing.
/// A period moves the chain forward only when it was bought after the chain's
/// latest period (or is that period, its expiry perhaps extended), so a late
/// copy of an old period never brings back what a newer one replaced.
public struct SubscriptionChange: Equatable, Sendable {
    public let kind: SubscriptionChangeKind
    /// Its place in the chain's history, ms since 1970 UTC: a notification's `signedDate`; for a period
    /// seen in a receipt or JWS, its revocation date when it has one, else its `purchaseDate` (a JWS's own
    /// `signedDate` is when Apple signed it for the app, possibly long after; a receipt is signed by no one).
    public let date: Int64
    /// The transaction it carries, when it carries one of this chain.
    public let period: SubscriptionPeriod?
    /// The renewal info it carries, verified.
    public let renewalInfo: RenewalInfo?

    public init(kind: SubscriptionChangeKind, date: Int64, period: SubscriptionPeriod?, renewalInfo: RenewalInfo?) {
        self.kind = kind
        self.date = date
        self.period = period
        self.renewalInfo = renewalInfo
    }

    /// A notification's change; nil for a type that changes no chain.
    public static func notification(
        type: String, subtype: String?, signedDate: Int64, period: SubscriptionPeriod?, renewalInfo: RenewalInfo?
    ) -> SubscriptionChange? {
        guard let kind = SubscriptionChangeKind(notificationType: type, subtype: subtype) else { return nil }
        return SubscriptionChange(kind: kind, date: signedDate, period: period, renewalInfo: renewalInfo)
    }

    /// A period a receipt or a JWS showed: a renewal, or a revocation when it carries one.
    public static func periodSeen(_ period: SubscriptionPeriod) -> SubscriptionChange {
        SubscriptionChange(
            kind: period.isRevoked ? .revoked : .renewed, date: period.revocationDate ?? period.purchaseDate,
            period: period, renewalInfo: nil)
    }

    /// What this change does to the chain `stored` (nil: the database has no row for it).
    public func outcome(from stored: SubscriptionState?) -> SubscriptionOutcome {
        if let last = stored?.lastSignedDate, date < last { return .stale }
        guard var next = stored ?? period.map(SubscriptionState.init(startingWith:)) else { return .noChain }
        let periodPlace = period.map { next.take($0) } ?? .older
        let aboutLatest = periodPlace != .older
        switch kind {
        case .renewed:
            if aboutLatest, period?.isRevoked == false { next.becomeActive() }
        case .gracePeriodStarted:
            next.status = .gracePeriod
            next.gracePeriodExpiresAt = renewalInfo?.gracePeriodExpiresDate ?? next.gracePeriodExpiresAt
            next.expirationIntent = nil
        case .billingRetry:
            next.status = .billingRetry
            next.gracePeriodExpiresAt = nil
            next.expirationIntent = nil
        case .expired(let intent):
            next.status = .expired
            next.gracePeriodExpiresAt = nil
            next.expirationIntent = intent ?? renewalInfo?.expirationIntent ?? next.expirationIntent
        case .revoked:
            if aboutLatest {
                next.status = .revoked
                next.gracePeriodExpiresAt = nil
            }
        case .renewalPreference, .extended:
            // A period bought after the latest (an upgrade, which starts a new period at once) is a renewal.
            if periodPlace == .newer, period?.isRevoked == false { next.becomeActive() }
        }
        if let info = renewalInfo, info.originalTransactionID == next.originalTransactionID {
            next.autoRenews = info.autoRenews ?? next.autoRenews
            next.autoRenewProductID = info.autoRenewProductID ?? next.autoRenewProductID
        }
        next.lastSignedDate = date  // never earlier than the last: a stale change returned above
        guard let stored else { return .changed(next, notifiesGame: true) }
        if next == stored { return .unchanged }
        let gameSees = next.status != stored.status || next.expiresAt != stored.expiresAt
            || next.autoRenews != stored.autoRenews
        return .changed(next, notifiesGame: gameSees)
    }
}

/// What a change does to a chain.
public enum SubscriptionOutcome: Equatable, Sendable {
    /// Dated before the last change applied to the chain: nothing changes.
    case stale
    /// The database has no row for the chain and the change carries no period to start one.
    case noChain
    /// Applied, and the row would stay as it is.
    case unchanged
    /// The row to write; `notifiesGame` when its status, expiry or auto-renewal differs (or the chain
    /// is new), so that a `subscription_changed` event goes with it.
    case changed(SubscriptionState, notifiesGame: Bool)
}

/// Where a period stands against the chain's latest.
enum PeriodPlace: Equatable {
    /// Bought before the latest (or the chain is another): it moves nothing.
    case older
    /// The latest itself.
    case latest
    /// Bought after the latest: it is the latest now.
    case newer
}

extension SubscriptionState {
    /// Takes what `period` says of the chain's latest period, and tells where it stood.
    mutating func take(_ period: SubscriptionPeriod) -> PeriodPlace {
        guard period.originalTransactionID == originalTransactionID else { return .older }
        if period.transactionID == latestTransactionID {
            expiresAt = period.expiresDate
            return .latest
        }
        guard period.purchaseDate > latestPurchaseDate else { return .older }
        latestTransactionID = period.transactionID
        latestPurchaseDate = period.purchaseDate
        productID = period.productID
        expiresAt = period.expiresDate
        return .newer
    }

    /// Paid again: no grace period, no reason to have expired.
    mutating func becomeActive() {
        status = .active
        gracePeriodExpiresAt = nil
        expirationIntent = nil
    }
}
