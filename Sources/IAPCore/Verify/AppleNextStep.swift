/// What `AppleCallSequence` asks its caller to do next.
public enum AppleNextStep: Equatable, Sendable {
    /// Call verifyReceipt in this environment, after waiting `afterMs` milliseconds.
    case call(AppleEnvironment, afterMs: Int)
    /// Stop calling: this is Apple's verdict.
    case finished(AppleVerdict)
}
