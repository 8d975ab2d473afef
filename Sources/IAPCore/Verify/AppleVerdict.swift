/// What Apple finally said about a receipt, once the call sequence is over.
public enum AppleVerdict: Equatable, Sendable {
    /// Status 0 (or 21006 with a receipt): read and deliver its transactions.
    case valid(AppleReply, environment: AppleEnvironment)
    /// Apple says the receipt is not valid (21003, 21010, 21002 after retries):
    /// the answer is `not_paid`.
    case invalid(appleStatus: Int)
    /// Apple could not be asked, or could not answer now: the answer is
    /// `retry_later`. `appleStatus` is Apple's last readable status, nil when
    /// no answer was readable.
    case unavailable(appleStatus: Int?)
}
