/// What came of one Finish Transaction call (`POST /inApps/v1/transactions/{id}/finish`).
public enum FinishCallOutcome: Equatable, Sendable {
    /// Apple answered: its HTTP status, the `errorCode` of its body when it had one, and a 429's
    /// `Retry-After` as Apple gives it (a UNIX time in milliseconds).
    case answered(httpStatus: Int, errorCode: Int?, retryAfterUnixMs: Int64?)
    /// No answer arrived.
    case noAnswer(AppleCallResult.TransportFailure)
    /// The call was never made: too many calls to Apple waited their turn already.
    case notSent
    /// The call is never made: the transaction id is not Apple's digits (`AppleTransactionID`).
    case invalidTransactionID

    /// Apple's answer: its status, the `errorCode` read from its body, and a 429's `Retry-After`.
    public static func answered(httpStatus: Int, body: [UInt8], retryAfterUnixMs: Int64?) -> FinishCallOutcome {
        .answered(
            httpStatus: httpStatus, errorCode: ServerAPICallSequence.errorCode(body), retryAfterUnixMs: retryAfterUnixMs)
    }

    /// Apple took it: any 2xx.
    public var isFinished: Bool {
        if case .answered(let status, _, _) = self { return (200...299).contains(status) }
        return false
    }

    /// The `result` label of `iap_transaction_finishes_total`: `finished`, `rate_limited`, `http_4xx`,
    /// `http_5xx`, `http_other`, `timeout`, `connection`, `tls`, `not_sent` or `invalid_id`.
    public var metricResult: String {
        switch self {
        case .answered(let status, _, _) where (200...299).contains(status): return "finished"
        case .answered(429, _, _): return "rate_limited"
        case .answered(let status, _, _) where (400...599).contains(status): return "http_\(status / 100)xx"
        case .answered: return "http_other"
        case .noAnswer(let failure): return failure.rawValue
        case .notSent: return "not_sent"
        case .invalidTransactionID: return "invalid_id"
        }
    }

    /// What `transaction_finishes.last_error` says about it; nil for a 2xx.
    public var lastError: String? {
        switch self {
        case .answered(let status, _, _) where (200...299).contains(status): return nil
        case .answered(let status, let errorCode?, _): return "HTTP \(status), errorCode \(errorCode)"
        case .answered(let status, nil, _): return "HTTP \(status)"
        case .noAnswer(.timeout): return "no answer in time"
        case .noAnswer(.connection): return "connection failed"
        case .noAnswer(.tls): return "TLS failed (certificate not trusted, or handshake refused)"
        case .notSent: return "not sent: too many calls to Apple waiting"
        case .invalidTransactionID: return "never sent: the transaction id is not decimal digits"
        }
    }
}
