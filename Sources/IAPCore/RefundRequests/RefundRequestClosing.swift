/// Why a refund request the sender holds is closed without a PUT, when it is:
/// Apple already decided it (a `REFUND`, `REVOKE` or `REFUND_DECLINED`
/// arrived first), or its deadline passed. Either way no answer can count any
/// more, and the request ends `expired` ("no answer accepted in time"), its
/// `outcome` telling an operator which of the two it was.
public enum RefundRequestClosing: Sendable, Equatable {
    /// Apple decided with this outcome before an answer was accepted.
    case decided(RefundRequestOutcome)
    /// Apple's 12 hours passed.
    case pastDeadline

    /// The closing of a pending request, nil when it may still be answered.
    /// A decision wins over the deadline: it is what the operator needs to read.
    /// - Parameter outcome: the request's `outcome`, nil while Apple has not decided.
    public static func of(outcome: RefundRequestOutcome?, deadlineMs: Int64, nowMs: Int64) -> Self? {
        if let outcome { return .decided(outcome) }
        return nowMs >= deadlineMs ? .pastDeadline : nil
    }

    /// The status it ends in.
    public var status: RefundRequestStatus { .expired }

    /// `last_error` to write: the last PUT's error stays when there was one
    /// (nil here), a request never tried says why it was not.
    public func error(attempts: Int) -> String? {
        guard attempts == 0 else { return nil }
        switch self {
        case .decided(let outcome): return "Apple decided (\(outcome.rawValue)) before a PUT"
        case .pastDeadline: return "deadline passed before a PUT"
        }
    }
}
