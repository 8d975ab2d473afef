/// One run of a `CallSequence` as its caller drives it: the sequence with the target of the call
/// asked for last, the verdict once there is one, and whether the caller's deadline stopped it.
/// The I/O around it (`CallConversation` in the service) only makes the calls and reads them.
public struct CallRun<Sequence: CallSequence>: Sendable {
    public private(set) var sequence: Sequence
    /// The target of the call asked for last; nil before the first.
    public private(set) var target: Sequence.Target?
    /// The caller's deadline ended the run before the sequence finished.
    public private(set) var stoppedByDeadline = false
    private var verdict: Sequence.Verdict?

    public init(_ sequence: Sequence) {
        self.sequence = sequence
    }

    /// How the run ended: the sequence's verdict, or the one for a run stopped before it had one.
    public var outcome: Sequence.Verdict {
        verdict ?? sequence.verdictWhenStopped
    }

    public mutating func start(atMs now: Int) -> CallStep<Sequence.Target, Sequence.Verdict> {
        noted(sequence.start(atMs: now))
    }

    public func timeLeftMs(atMs now: Int) -> Int {
        sequence.timeLeftMs(atMs: now)
    }

    /// The step after the result of the call to `target`, which came at `now`.
    public mutating func next(after result: Sequence.Result, atMs now: Int) -> CallStep<Sequence.Target, Sequence.Verdict> {
        if let verdict { return .finished(verdict) }
        return noted(sequence.next(after: result, atMs: now))
    }

    /// The caller's deadline passed: no further call, the verdict is `verdictWhenStopped`.
    public mutating func stopByDeadline() {
        stoppedByDeadline = true
        verdict = sequence.verdictWhenStopped
    }

    private mutating func noted(_ step: CallStep<Sequence.Target, Sequence.Verdict>) -> CallStep<Sequence.Target, Sequence.Verdict> {
        switch step {
        case .call(let target, _): self.target = target
        case .finished(let verdict): self.verdict = verdict
        }
        return step
    }
}
