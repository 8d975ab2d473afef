/// The `status` of a verify answer, with what the table of docs/api.md "The
/// verify answer" ties to it.
public enum VerifyStatus: String, Equatable, Sendable, CaseIterable {
    /// At least one transaction was delivered by this request.
    case delivered
    /// Everything valid in the receipt had been delivered before.
    case alreadyDelivered = "already_delivered"
    /// Apple says invalid, or the receipt holds no paid transaction.
    case notPaid = "not_paid"
    /// Valid, but not for us: another bundle id, or sandbox against the policy.
    case rejected
    /// Valid, but the named `transaction_id` is not in it yet.
    case pending
    /// Apple or the database cannot be used now.
    case retryLater = "retry_later"

    /// The answer's `code`.
    public var code: Int {
        switch self {
        case .delivered: return 2
        case .alreadyDelivered: return 1
        case .notPaid, .rejected: return 3
        case .pending, .retryLater: return 4
        }
    }

    public var httpStatus: Int {
        switch self {
        case .delivered, .alreadyDelivered, .notPaid, .rejected: return 200
        case .pending: return 202
        case .retryLater: return 503
        }
    }

    /// Whether the app may call `finishTransaction`: only once nothing is left to
    /// record. An unfinished transaction comes back at the app's next launch.
    public var finishTransaction: Bool {
        switch self {
        case .pending, .retryLater: return false
        case .delivered, .alreadyDelivered, .notPaid, .rejected: return true
        }
    }

    /// The `Retry-After` header, in seconds: 5 for `retry_later`, nil otherwise.
    public var retryAfterSeconds: Int? {
        self == .retryLater ? 5 : nil
    }
}
