/// What a `CallSequence` asks its caller to do next.
public enum CallStep<Target, Verdict> {
    /// Call `Target` (an environment of Apple's, Google's token endpoint or API) after waiting
    /// `afterMs` milliseconds.
    case call(Target, afterMs: Int)
    /// Stop calling: the conversation ended with this verdict.
    case finished(Verdict)
}

extension CallStep: Equatable where Target: Equatable, Verdict: Equatable {}
extension CallStep: Sendable where Target: Sendable, Verdict: Sendable {}
