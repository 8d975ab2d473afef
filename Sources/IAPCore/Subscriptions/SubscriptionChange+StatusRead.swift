extension SubscriptionChange {
    /// What Get All Subscription Statuses says of a chain now: Apple's status (`SubscriptionStatus(appleStatus:)`)
    /// with its latest period and renewal info, as a change dated when Apple signed the renewal info (else the
    /// period's JWS), which is when Apple read the chain's state: a notification signed later still wins.
    public static func statusRead(
        _ status: SubscriptionStatus, period: SubscriptionPeriod, renewalInfo: RenewalInfo?, transactionSignedDate: Int64
    ) -> SubscriptionChange {
        let kind: SubscriptionChangeKind
        switch status {
        case .active: kind = .renewed
        case .gracePeriod: kind = .gracePeriodStarted
        case .billingRetry: kind = .billingRetry
        case .expired: kind = .expired(renewalInfo?.expirationIntent)
        case .revoked: kind = .revoked
        }
        return SubscriptionChange(
            kind: kind, date: renewalInfo?.signedDate ?? transactionSignedDate, period: period, renewalInfo: renewalInfo)
    }
}
