/// Plain words for the states the console shows, for support staff who do not
/// read the schema: what a state means for the player and what to do.
public enum StateExplanation {
    /// A transaction's `state` (transactions.state).
    public static func transaction(_ state: String) -> String {
        switch state {
        case "delivered": return "Paid and delivered: the game was told to grant it."
        case "refunded": return "Refunded by Apple: the game was told to take it back (or it was never granted)."
        case "unclaimed":
            return "Paid, but seen only in Apple's notification: no player claimed it yet. The game's client sends it"
                + " on its next start; or look up the Apple order id and deliver it."
        case "rejected": return "Refused: another app's purchase, or a sandbox purchase the policy does not honour."
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

    /// A refund request's `status` (consumption_requests.status), and its `outcome` when Apple decided.
    public static func refundRequest(_ status: String, outcome: String?) -> String {
        let sent: String
        switch status {
        case "pending": sent = "Our answer to Apple is waiting to be sent."
        case "sent": sent = "Our answer (delivery and consumption) reached Apple."
        case "no_consent": sent = "Nothing was sent: the player had not consented to share consumption data."
        case "expired": sent = "No answer of ours was accepted in time: Apple's 12 hours passed, or Apple decided first."
        case "failed": sent = "Apple refused our answer (see the error)."
        default: sent = "Status \(status)."
        }
        switch outcome {
        case "refunded": return sent + " Apple refunded the purchase."
        case "declined": return sent + " Apple declined the refund."
        default: return sent + " Apple has not decided yet."
        }
    }

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
