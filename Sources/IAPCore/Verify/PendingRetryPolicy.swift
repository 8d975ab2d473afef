/// How `iapctl retry-pending` treats a receipt whose verification did not
/// complete again: when to try next (backoff, doubling from `backoffSeconds`,
/// at most a day), and when to give up for good, so that receipts Apple never
/// settles stop coming back and cannot keep newer ones from being reached.
public struct PendingRetryPolicy: Equatable, Sendable {
    /// Attempts after which a receipt is given up.
    public let maxAttempts: Int
    /// The wait after the first failed attempt; each further one doubles it.
    public let backoffSeconds: Int

    /// The longest wait between two attempts.
    public static let maxBackoffSeconds = 86_400

    public init(maxAttempts: Int, backoffSeconds: Int) {
        self.maxAttempts = maxAttempts
        self.backoffSeconds = backoffSeconds
    }

    /// What follows an attempt.
    public enum Next: Equatable, Sendable {
        /// The verification completed: nothing more to do.
        case settled
        /// Try again this many seconds from now.
        case retry(afterSeconds: Int)
        /// No more attempts; the reason is what the run reports and stores.
        case giveUp(reason: String)
    }

    /// - Parameters:
    ///   - attempts: the attempts made, this one included.
    ///   - completed: whether this attempt completed the verification.
    ///   - appleStatus: Apple's last status in this attempt, nil when none was readable.
    ///   - isRetryable: Apple's `is-retryable` flag on that answer.
    public func next(attempts: Int, completed: Bool, appleStatus: Int?, isRetryable: Bool) -> Next {
        if completed { return .settled }
        if let appleStatus, Self.isFinal(AppleStatus(appleStatus), isRetryable: isRetryable) {
            let status = AppleStatus(appleStatus)
            return .giveUp(reason: "Apple status \(status): asking again will not help")
        }
        if attempts >= maxAttempts {
            let last = appleStatus.map { "Apple status \(AppleStatus($0))" } ?? "no answer from Apple"
            return .giveUp(reason: "no attempts left (--max-attempts \(maxAttempts)); last: \(last)")
        }
        return .retry(afterSeconds: backoff(afterAttempt: attempts))
    }

    /// The wait after failed attempt number `attempts` (1-based).
    public func backoff(afterAttempt attempts: Int) -> Int {
        var seconds = backoffSeconds
        for _ in 1..<max(attempts, 1) {
            guard seconds < Self.maxBackoffSeconds else { break }
            seconds *= 2
        }
        return min(seconds, Self.maxBackoffSeconds)
    }

    /// The statuses not to ask again about (docs/apple.md "Statuses"): 21000 (the request
    /// was not readable) and Apple's internal errors without `is-retryable`.
    /// 21004 is not one: fixing the shared secret makes the receipt verifiable.
    private static func isFinal(_ status: AppleStatus, isRetryable: Bool) -> Bool {
        status == .unreadableRequest || (status.isInternalError && !isRetryable)
    }
}
