/// Plain words for the states the console shows, for support staff who do not
/// read the schema: what a state means for the player and what to do.
public enum StateExplanation {
    /// A transaction's `state` (transactions.state), of the store that sold it; a Google purchase may have had
    /// part of its quantity refunded (`refunded_quantity` of `quantity`) and stay delivered.
    public static func transaction(_ state: String, store: String = "app_store", quantity: Int = 1, refundedQuantity: Int = 0)
        -> String
    {
        let storeName = company(store)
        switch state {
        case "delivered" where refundedQuantity > 0:
            return "Paid and delivered; \(storeName) then refunded \(refundedQuantity) of \(quantity): the game was told to"
                + " take those back, the rest stay."
        case "delivered": return "Paid and delivered: the game was told to grant it."
        case "refunded": return "Refunded by \(storeName): the game was told to take it back (or it was never granted)."
        case "unclaimed" where store == "google_play":
            return "Paid, but seen only in Google's notification: no player claimed it yet. The game's client sends it"
                + " on its next start."
        case "unclaimed":
            return "Paid, but seen only in Apple's notification: no player claimed it yet. The game's client sends it"
                + " on its next start; or look up the Apple order id and deliver it."
        case "rejected":
            return "Refused: another app's purchase, or a sandbox or test purchase the policy does not honour."
        default: return "State \(state)."
        }
    }

    /// An order's `status`.
    public static func order(_ status: String) -> String {
        switch status {
        case "created": return "Made by the client before paying; no paid transaction delivered to it (yet)."
        case "delivered": return "A paid transaction was delivered to it."
        case "refunded": return "Its transaction was refunded."
        default: return "Status \(status)."
        }
    }

    /// An event's webhook `status`.
    public static func event(_ status: String) -> String {
        switch status {
        case "pending": return "Not yet acknowledged by the game's webhook: it is being sent, with retries."
        case "sent": return "The game's webhook answered 2xx: the game has it."
        case "failed":
            return "The webhook gave up after 72 hours without a 2xx: the game may not have it. Fix the game's"
                + " server, then redeliver."
        default: return "Status \(status)."
        }
    }

    /// A refund request's `status` (consumption_requests.status), and its `outcome` when the store decided:
    /// Apple's `CONSUMPTION_REQUEST` (12 hours to answer) or Google's refund review (24 hours).
    public static func refundRequest(_ status: String, outcome: String?, store: String = "app_store") -> String {
        let storeName = company(store)
        let sent: String
        switch status {
        case "pending": sent = "Our answer to \(storeName) is waiting to be sent."
        case "sent": sent = "Our answer (delivery and consumption) reached \(storeName)."
        case "no_consent": sent = "Nothing was sent: the player had not consented to share consumption data."
        case "expired":
            sent = "No answer of ours was accepted in time: \(storeName)'s \(store == "google_play" ? 24 : 12) hours passed,"
                + " or \(storeName) decided first."
        case "failed": sent = "\(storeName) refused our answer (see the error)."
        default: sent = "Status \(status)."
        }
        switch outcome {
        case "refunded": return sent + " \(storeName) refunded the purchase."
        case "declined": return sent + " \(storeName) declined the refund."
        default: return sent + " \(storeName) has not decided yet."
        }
    }

    /// A subscription chain's `status` (subscriptions.status), and whether the `entitlements` view lists it
    /// now: a chain past its expiry is not entitled even while no notification has changed its status.
    public static func subscription(_ status: String, entitled: Bool) -> String {
        switch status {
        case "active" where !entitled, "grace_period" where !entitled:
            return "Its paid period (or grace period) is over and no renewal has arrived: not entitled until one does"
                + " (iapctl subscriptions sync asks the store)."
        case "active": return "Paid until it expires; renews then if auto-renew is on."
        case "grace_period": return "The renewal payment failed; the store retries, and the player keeps it until the grace period ends."
        case "billing_retry": return "The renewal payment failed; the store retries. Not entitled meanwhile."
        case "expired": return "Ended without renewal (see why): not entitled."
        case "revoked": return "Its latest period was refunded or revoked: not entitled."
        default: return "Status \(status)."
        }
    }

    /// Who decides for the store: what a player calls the one that took their money back.
    private static func company(_ store: String) -> String { store == "google_play" ? "Google" : "Apple" }

    /// A receipt or JWS audit row: whether and how it was verified.
    public static func audit(appleStatus: String?, verified: Bool, refusedReason: String?) -> String {
        if let refusedReason { return "Refused before delivery: \(refusedReason)." }
        guard verified else { return "Not verified yet: Apple did not answer; it is retried." }
        switch appleStatus {
        case nil, "0": return "Verified."
        case let status?: return "Apple answered status \(status): not a valid purchase."
        }
    }
}
