/// Where an auto-renewable subscription chain stands (`subscriptions.status`).
public enum SubscriptionStatus: String, Equatable, Sendable, CaseIterable {
    /// Paid until its expiry.
    case active
    /// A renewal failed and Apple retries, but the player keeps the subscription until the grace period ends.
    case gracePeriod = "grace_period"
    /// A renewal failed and Apple retries; the player has no subscription meanwhile.
    case billingRetry = "billing_retry"
    case expired
    /// Its latest period was refunded or revoked (Family Sharing).
    case revoked

    /// Apple's `status` of a chain in Get All Subscription Statuses (1 active, 2 expired, 3 billing
    /// retry, 4 billing grace period, 5 revoked); nil for any other number.
    public init?(appleStatus: Int) {
        switch appleStatus {
        case 1: self = .active
        case 2: self = .expired
        case 3: self = .billingRetry
        case 4: self = .gracePeriod
        case 5: self = .revoked
        default: return nil
        }
    }
}
