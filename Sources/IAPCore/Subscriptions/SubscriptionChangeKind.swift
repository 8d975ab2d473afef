/// What arrived about a chain, by its effect on the chain's status.
public enum SubscriptionChangeKind: Equatable, Sendable {
    /// `SUBSCRIBED`, `DID_RENEW`, `OFFER_REDEEMED`, `REFUND_REVERSED`, or a period seen in a receipt or
    /// JWS: active again when it is about the latest period.
    case renewed
    /// `DID_FAIL_TO_RENEW` with subtype `GRACE_PERIOD`: still entitled until the grace period ends.
    case gracePeriodStarted
    /// `DID_FAIL_TO_RENEW` without subtype, `GRACE_PERIOD_EXPIRED`: Apple retries, not entitled.
    case billingRetry
    /// `EXPIRED`, its subtype the reason when it has one.
    case expired(ExpirationIntent?)
    /// `REFUND`, `REVOKE`: revoked when it is about the latest period.
    case revoked
    /// `DID_CHANGE_RENEWAL_STATUS`, `DID_CHANGE_RENEWAL_PREF`, `PRICE_INCREASE`: the status stays;
    /// the renewal info says what renews next.
    case renewalPreference
    /// `RENEWAL_EXTENDED`: the period's expiry moved.
    case extended

    /// The kind of a notification type and subtype; nil for the types that change no chain
    /// (`ONE_TIME_CHARGE`, `CONSUMPTION_REQUEST`, `REFUND_DECLINED`, `RENEWAL_EXTENSION`'s summary, `TEST`, ...).
    public init?(notificationType: String, subtype: String?) {
        switch notificationType {
        case "SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED", "REFUND_REVERSED": self = .renewed
        case "DID_FAIL_TO_RENEW": self = subtype == "GRACE_PERIOD" ? .gracePeriodStarted : .billingRetry
        case "GRACE_PERIOD_EXPIRED": self = .billingRetry
        case "EXPIRED": self = .expired(subtype.map(ExpirationIntent.init(rawValue:)))
        case "REFUND", "REVOKE": self = .revoked
        case "DID_CHANGE_RENEWAL_STATUS", "DID_CHANGE_RENEWAL_PREF", "PRICE_INCREASE": self = .renewalPreference
        case "RENEWAL_EXTENDED": self = .extended
        default: return nil
        }
    }
}
