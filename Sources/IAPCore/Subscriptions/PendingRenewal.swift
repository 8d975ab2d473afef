/// verifyReceipt's `pending_renewal_info`: for each chain of the receipt, what Apple knows now of its
/// next renewal (strings, as verifyReceipt writes them). It moves the chain as renewal info does.
/// verifyReceipt signs nothing, so it takes the place of the newest period the same answer shows of the
/// chain: after those periods, never after a notification Apple signed later.
public enum PendingRenewal {
    /// The changes the answer's entries make, one per entry of a chain `place` dates (the purchase date
    /// of its newest period shown); entries of other chains, or without `original_transaction_id`, are
    /// skipped. `now`: whether a grace period has ended.
    public static func changes(
        in answer: JSONObject, environment: String, now: Int64, place: (String) -> Int64?
    ) -> [SubscriptionChange] {
        guard case .array(let entries)? = answer["pending_renewal_info"] else { return [] }
        return entries.compactMap { entry in
            guard let object = entry.objectValue,
                let chainID = AppleScalar.text(object["original_transaction_id"]), let date = place(chainID),
                let info = RenewalInfo(pendingRenewal: object, placedAt: date, environment: environment)
            else { return nil }
            return SubscriptionChange(kind: kind(of: info, now: now), date: date, period: nil, renewalInfo: info)
        }
    }

    /// In billing retry: a grace period while it has not ended, else billing retry; expired when Apple
    /// gives a reason; otherwise only what renews next.
    static func kind(of info: RenewalInfo, now: Int64) -> SubscriptionChangeKind {
        if info.isInBillingRetryPeriod == true {
            if let grace = info.gracePeriodExpiresDate, grace > now { return .gracePeriodStarted }
            return .billingRetry
        }
        if let intent = info.expirationIntent { return .expired(intent) }
        return .renewalPreference
    }
}

extension RenewalInfo {
    /// One `pending_renewal_info` entry; nil without `original_transaction_id`.
    init?(pendingRenewal object: JSONObject, placedAt date: Int64, environment: String) {
        guard let originalTransactionID = AppleScalar.text(object["original_transaction_id"]) else { return nil }
        self.originalTransactionID = originalTransactionID
        productID = AppleScalar.text(object["product_id"])
        autoRenewProductID = AppleScalar.text(object["auto_renew_product_id"])
        autoRenews = AppleScalar.text(object["auto_renew_status"]).map { _ in AppleScalar.flag(object["auto_renew_status"]) }
        expirationIntent = AppleScalar.int(object["expiration_intent"]).map(ExpirationIntent.init(renewalInfoCode:))
        gracePeriodExpiresDate = AppleScalar.int64(object["grace_period_expires_date_ms"])
        isInBillingRetryPeriod = AppleScalar.text(object["is_in_billing_retry_period"]).map { _ in
            AppleScalar.flag(object["is_in_billing_retry_period"])
        }
        renewalDate = nil
        signedDate = date
        self.environment = environment
    }
}
