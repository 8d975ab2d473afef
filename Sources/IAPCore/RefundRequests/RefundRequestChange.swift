/// What a notification does to the refund-request ledger (`consumption_requests`,
/// docs/events.md "Refund requests"), given the latest request of its transaction as
/// read under its row lock. Apple may ask twice about one refund (a new
/// `notificationUUID`): the request not yet answered is reused, with the new
/// notification's date and deadline, so one refund gets one answer. Apple's
/// decision (`REFUND`, `REVOKE`, `REFUND_DECLINED`) closes the latest request:
/// it is never answered after that, and Apple asking again later is a new request.
/// Notifications arrive out of order: an older one never overrides a newer one.
public enum RefundRequestChange: Equatable, Sendable {
    /// The ledger does not change.
    case none
    /// A new request, `pending`.
    case open
    /// The request not yet sent is asked again: it takes the new notification
    /// (uuid, reason, date, deadline) and is `pending` again.
    case reopen(requestID: UInt64)
    /// Apple decided: the request's `outcome` and `outcome_at`.
    case close(requestID: UInt64, RefundRequestOutcome)

    /// A refund request may be answered for 12 hours after Apple asks (docs/apple.md
    /// "Refund requests: Send Consumption Information").
    public static let answerWindowMs: Int64 = 12 * 3_600_000

    /// `deadline_at` of a request Apple signed at `requestedAtMs`.
    public static func deadline(requestedAtMs: Int64) -> Int64 {
        requestedAtMs + answerWindowMs
    }

    /// Apple's notification type that asks.
    public static let requestType = "CONSUMPTION_REQUEST"

    /// Whether notifications of this type may change the ledger (the others need not read it).
    public static func concerns(notificationType: String) -> Bool {
        ["CONSUMPTION_REQUEST", "REFUND", "REVOKE", "REFUND_DECLINED"].contains(notificationType)
    }

    /// The change for a notification of `notificationType` signed at `signedDate` (ms).
    /// - Parameter latest: the transaction's newest request, nil when it has none.
    public static func decide(notificationType: String, signedDate: Int64, latest: StoredRefundRequest?) -> Self {
        switch notificationType {
        case requestType:
            guard let latest else { return .open }
            // An ask older than the one on file was answered (or is being answered) with it.
            if signedDate < latest.requestedAtMs { return .none }
            if let decidedAtMs = latest.outcomeAtMs {
                // Apple decided that request: an ask signed before the decision was part of it, a later one is new.
                return signedDate < decidedAtMs ? .none : .open
            }
            return latest.status == .sent ? .open : .reopen(requestID: latest.requestID)
        case "REFUND", "REVOKE":
            return close(latest, .refunded, signedDate: signedDate)
        case "REFUND_DECLINED":
            return close(latest, .declined, signedDate: signedDate)
        default:
            return .none
        }
    }

    /// A decision made after the request was asked, and not older than the decision on file.
    private static func close(_ latest: StoredRefundRequest?, _ outcome: RefundRequestOutcome, signedDate: Int64) -> Self {
        guard let latest, signedDate >= latest.requestedAtMs else { return .none }
        if let decided = latest.outcomeAtMs, signedDate < decided { return .none }
        return .close(requestID: latest.requestID, outcome)
    }
}

/// `consumption_requests.status`.
public enum RefundRequestStatus: String, Equatable, Sendable, CaseIterable {
    /// To send (or being sent).
    case pending
    /// Apple answered 202.
    case sent
    /// The user's consent was not in force: nothing sent.
    case noConsent = "no_consent"
    /// No 202 before the deadline.
    case expired
    /// Apple refused it with a 4xx.
    case failed
}

/// `consumption_requests.outcome`: what Apple decided.
public enum RefundRequestOutcome: String, Equatable, Sendable, CaseIterable {
    case refunded
    case declined
}

/// A transaction's newest `consumption_requests` row, as the ledger's decision needs it.
public struct StoredRefundRequest: Equatable, Sendable {
    public let requestID: UInt64
    public let status: RefundRequestStatus
    /// `requested_at`, ms since 1970 UTC.
    public let requestedAtMs: Int64
    /// `outcome_at`, nil while Apple has not decided.
    public let outcomeAtMs: Int64?

    public init(requestID: UInt64, status: RefundRequestStatus, requestedAtMs: Int64, outcomeAtMs: Int64?) {
        self.requestID = requestID
        self.status = status
        self.requestedAtMs = requestedAtMs
        self.outcomeAtMs = outcomeAtMs
    }
}
