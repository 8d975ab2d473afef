/// The `status` of a verifyReceipt answer, as a typed value over Apple's raw
/// number: a status this table does not know is kept, not rejected.
///
/// The table (docs/apple.md "Statuses"):
///
/// | status | meaning | what to do |
/// |---|---|---|
/// | 0 | valid | read every transaction |
/// | 21000 | request not readable | our bug: do not retry |
/// | 21002 | malformed data, or a passing fault | retry a few times, then invalid |
/// | 21003 | could not be authenticated | invalid |
/// | 21004 | shared secret mismatch | configuration error: retry later |
/// | 21005 | server unavailable | retry |
/// | 21006 | valid, subscription expired (iOS 6, body present) | valid |
/// | 21007 | sandbox receipt sent to production | send to the sandbox |
/// | 21008 | production receipt sent to the sandbox | send to production |
/// | 21009 | internal data access error | retry |
/// | 21010 | account not found or deleted | invalid |
/// | 21100-21199 | internal errors | retry only when Apple says `is-retryable` |
public struct AppleStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    public init(_ rawValue: Int) {
        self.rawValue = rawValue
    }

    public static let valid = AppleStatus(0)
    public static let unreadableRequest = AppleStatus(21000)
    public static let malformedReceipt = AppleStatus(21002)
    public static let notAuthenticated = AppleStatus(21003)
    public static let sharedSecretMismatch = AppleStatus(21004)
    public static let serverUnavailable = AppleStatus(21005)
    public static let subscriptionExpired = AppleStatus(21006)
    public static let sandboxReceiptSentToProduction = AppleStatus(21007)
    public static let productionReceiptSentToSandbox = AppleStatus(21008)
    public static let internalDataAccessError = AppleStatus(21009)
    public static let accountNotFound = AppleStatus(21010)

    /// Apple's internal errors, retried only when the answer says so.
    public static let internalErrors: ClosedRange<Int> = 21100...21199

    public var isInternalError: Bool {
        Self.internalErrors.contains(rawValue)
    }

    /// What to do with an answer of this status, before attempts are counted.
    /// `isRetryable` is Apple's `is-retryable` flag, which only matters for the
    /// internal errors.
    public func action(isRetryable: Bool) -> AppleStatusAction {
        switch self {
        case .valid, .subscriptionExpired: return .accept
        case .sandboxReceiptSentToProduction: return .sendTo(.sandbox)
        case .productionReceiptSentToSandbox: return .sendTo(.production)
        case .malformedReceipt: return .retryThenInvalid
        case .serverUnavailable, .internalDataAccessError: return .retryThenUnavailable
        case .notAuthenticated, .accountNotFound: return .invalid
        default:
            // 21000, 21004, a non-retryable internal error, or a status nobody documented.
            return isInternalError && isRetryable ? .retryThenUnavailable : .unavailable
        }
    }

    public var description: String {
        "\(rawValue) (\(meaning))"
    }

    /// What the status means, for logs and operators.
    public var meaning: String {
        switch self {
        case .valid: return "valid"
        case .unreadableRequest: return "request not readable"
        case .malformedReceipt: return "malformed receipt data"
        case .notAuthenticated: return "receipt could not be authenticated"
        case .sharedSecretMismatch: return "shared secret mismatch"
        case .serverUnavailable: return "receipt server unavailable"
        case .subscriptionExpired: return "valid, subscription expired"
        case .sandboxReceiptSentToProduction: return "sandbox receipt sent to production"
        case .productionReceiptSentToSandbox: return "production receipt sent to the sandbox"
        case .internalDataAccessError: return "internal data access error"
        case .accountNotFound: return "account not found or deleted"
        default: return isInternalError ? "internal error" : "undocumented status"
        }
    }
}

/// What the status table says to do with one answer of Apple.
public enum AppleStatusAction: Equatable, Sendable {
    /// The receipt is valid: read its transactions.
    case accept
    /// The receipt belongs to the other environment: ask it there.
    case sendTo(AppleEnvironment)
    /// Malformed data, or a passing fault: ask again, spread over the budget;
    /// when the attempts run out the receipt is invalid (`not_paid`, docs/api.md
    /// "The verify answer").
    case retryThenInvalid
    /// A passing fault: ask again; when attempts run out, retry later.
    case retryThenUnavailable
    /// The receipt is not valid: nothing was paid.
    case invalid
    /// Apple cannot answer now, and asking again at once will not help.
    case unavailable
}
