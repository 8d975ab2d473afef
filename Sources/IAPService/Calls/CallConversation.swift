import Curl
import IAPCore

/// What is particular to one kind of call to a store: how a call is made, how its result is read,
/// and whom the verdict goes to. `CallConversation` runs its `CallSequence` with it. Every method
/// runs on `AppleClient`'s thread.
protocol CallExchange: AnyObject {
    associatedtype Sequence: CallSequence

    /// Counted against the client's waiting limit until the first transfer starts.
    var admittedBytes: Int { get }
    /// The `endpoint` label of its calls in the metrics (`AppleConversationEndpoint`).
    var endpointLabel: String { get }
    /// The environment the metrics show for a call to `target`.
    func environment(of target: Sequence.Target) -> AppleEnvironment
    /// Sets `transfer` up for a call to `target` that may take `timeoutMs`.
    func prepare(_ transfer: CurlTransfer, for target: Sequence.Target, timeoutMs: Int) throws(CurlError)
    /// A call's result as the sequence reads it; `retryAfter` is the answer's `Retry-After` as a number.
    func read(_ result: AppleCallResult, retryAfter: Int64?, from target: Sequence.Target) -> Sequence.Result
    /// Sees a call's result once the sequence has read it (metrics).
    func noteResult(_ result: AppleCallResult, from target: Sequence.Target, sequence: Sequence)
    /// Hands the outcome to the caller's completion (which must not block).
    func complete(_ verdict: Sequence.Verdict, sequence: Sequence, stoppedByDeadline: Bool)
}

extension CallExchange {
    /// Every call but verifyReceipt's and Google's is to the App Store Server API.
    var endpointLabel: String { AppleConversationEndpoint.serverAPI }

    func noteResult(_ result: AppleCallResult, from target: Sequence.Target, sequence: Sequence) {}
}

extension CallExchange where Sequence.Target == AppleEnvironment {
    func environment(of target: AppleEnvironment) -> AppleEnvironment { target }
}

/// One conversation with a store that `AppleClient` drives: its pure `CallSequence` (run by a
/// `CallRun`) says what to call and when, its `CallExchange` makes each call and reads what came
/// back. The same loop for every kind of call: start, call, feed the result, finish (or be stopped
/// by the deadline).
final class CallConversation<Exchange: CallExchange>: AppleConversation {
    let exchange: Exchange
    let deadline: Deadline
    private var run: CallRun<Exchange.Sequence>

    init(_ sequence: Exchange.Sequence, exchange: Exchange, deadline: Deadline) {
        self.run = CallRun(sequence)
        self.exchange = exchange
        self.deadline = deadline
    }

    var admittedBytes: Int { exchange.admittedBytes }
    var endpointLabel: String { exchange.endpointLabel }

    func start(atMs now: Int) -> AppleConversationStep {
        step(run.start(atMs: now))
    }

    func timeLeftMs(atMs now: Int) -> Int {
        run.timeLeftMs(atMs: now)
    }

    /// `environment` is what this conversation asked for last: its run's target says more.
    func prepare(_ transfer: CurlTransfer, for environment: AppleEnvironment, timeoutMs: Int) throws(CurlError) {
        // The client prepares a transfer only for a call this conversation asked for.
        guard let target = run.target else { preconditionFailure("a transfer prepared before any call was asked for") }
        try exchange.prepare(transfer, for: target, timeoutMs: timeoutMs)
    }

    func next(after result: AppleCallResult, retryAfterUnixMs: Int64?, atMs now: Int) -> AppleConversationStep {
        guard let target = run.target else { return .finished }
        let next = step(run.next(after: exchange.read(result, retryAfter: retryAfterUnixMs, from: target), atMs: now))
        exchange.noteResult(result, from: target, sequence: run.sequence)
        return next
    }

    func stopByDeadline() {
        run.stopByDeadline()
    }

    func complete() {
        exchange.complete(run.outcome, sequence: run.sequence, stoppedByDeadline: run.stoppedByDeadline)
    }

    private func step(_ next: CallStep<Exchange.Sequence.Target, Exchange.Sequence.Verdict>) -> AppleConversationStep {
        switch next {
        case .call(let target, let afterMs): return .call(exchange.environment(of: target), afterMs: afterMs)
        case .finished: return .finished
        }
    }
}
