import Curl
import IAPCore

/// Every call to Apple's verifyReceipt, driven by one thread over libcurl's
/// multi interface: a call waiting seconds for Apple holds a socket and a few
/// kilobytes, not a thread. Connections and TLS sessions are kept and reused.
///
/// Callers hand over a receipt and a completion; the completion runs on the
/// client's thread when the call sequence (production, sandbox, retries) is
/// over, and must only hand the result on (it must not block).
final class AppleClient: @unchecked Sendable {
    typealias Completion = @Sendable (AppleOutcome) -> Void

    private let endpoints: AppleEndpoints
    private let multi: CurlMulti
    /// Calls handed over by other threads, not yet started.
    private let submitted = Locked<[Call]>([])
    private let stopping = Locked(false)
    // The rest belongs to the client's own thread.
    private var waiting: [Call] = []
    /// Calls ready to go while `maxCalls` are under way, first come first served.
    private var queued: [Call] = []
    private var idleTransfers: [CurlTransfer] = []

    init(endpoints: AppleEndpoints) throws {
        self.endpoints = endpoints
        self.multi = try CurlMulti(maxConnections: endpoints.maxCalls)
    }

    /// Starts the client's thread.
    func start() {
        startThread { [self] in run() }
    }

    /// Verifies a receipt with Apple; `completion` gets the outcome.
    func verify(receiptBase64: String, completion: @escaping Completion) {
        let call = Call(body: endpoints.requestBody(receiptBase64: receiptBase64), policy: endpoints.retryPolicy,
                        completion: completion)
        submitted.withLock { $0.append(call) }
        multi.wakeUp()
    }

    /// Lets the thread end once every call under way has completed.
    func stop() {
        stopping.withLock { $0 = true }
        multi.wakeUp()
    }

    private func run() {
        while true {
            for call in submitted.withLock({ calls in defer { calls.removeAll() }; return calls }) {
                advance(call, to: call.sequence.start(atMs: Self.nowMs()))
            }
            startDueCalls()
            do {
                for (transfer, outcome) in try multi.perform() {
                    complete(transfer, outcome)
                }
                startQueuedCalls()
                if stopping.withLock({ $0 }) && multi.count == 0 && waiting.isEmpty && queued.isEmpty
                    && submitted.withLock({ $0.isEmpty })
                {
                    return
                }
                try multi.wait(timeoutMs: nextWaitMs())
            } catch {
                Log.event("Apple client: \(error)")
            }
        }
    }

    /// Moves a call to its next step: a call to Apple now or later, or the end.
    private func advance(_ call: Call, to step: AppleNextStep) {
        switch step {
        case .call(let environment, let afterMs) where afterMs > 0:
            call.environment = environment
            call.dueAt = Clock.monotonicNanoseconds() + UInt64(afterMs) * 1_000_000
            waiting.append(call)
        case .call(let environment, _):
            call.environment = environment
            startTransfer(call)
        case .finished(let verdict):
            call.completion(
                AppleOutcome(verdict: verdict, environment: call.sequence.environment, lastAnswer: call.lastAnswer))
        }
    }

    private func startTransfer(_ call: Call) {
        guard multi.count < endpoints.maxCalls else {
            queued.append(call)
            return
        }
        // The call may only use what is left of the conversation's budget.
        let now = Self.nowMs()
        let timeoutMs = call.sequence.timeLeftMs(atMs: now)
        guard timeoutMs > 0 else {
            return advance(call, to: call.sequence.next(after: .transportFailure(.timeout), atMs: now))
        }
        do {
            let transfer = try idleTransfers.popLast() ?? CurlTransfer()
            try transfer.prepare(
                url: endpoints.url(for: call.environment), body: call.body, caFile: endpoints.caFile,
                connectTimeoutMs: endpoints.connectTimeoutMs(within: timeoutMs), totalTimeoutMs: timeoutMs)
            transfer.context = call
            try multi.add(transfer)
        } catch {
            Log.event("Apple call could not start: \(error)")
            advance(call, to: call.sequence.next(after: .transportFailure(.connection), atMs: Self.nowMs()))
        }
    }

    private func complete(_ transfer: CurlTransfer, _ outcome: CurlTransfer.Outcome) {
        guard let call = transfer.context as? Call else { return }
        transfer.context = nil
        let result: AppleCallResult
        switch outcome {
        case .answered(let httpStatus):
            result = .answered(httpStatus: httpStatus, body: transfer.responseBody)
            call.lastAnswer = transfer.responseBody
        case .timedOut:
            result = .transportFailure(.timeout)
        case .tlsFailed:
            result = .transportFailure(.tls)
        case .connectionFailed:
            result = .transportFailure(.connection)
        }
        idleTransfers.append(transfer)
        advance(call, to: call.sequence.next(after: result, atMs: Self.nowMs()))
    }

    /// The monotonic clock in milliseconds, the unit of `AppleCallSequence`.
    private static func nowMs() -> Int {
        Int(Clock.monotonicNanoseconds() / 1_000_000)
    }

    private func startQueuedCalls() {
        let free = min(endpoints.maxCalls - multi.count, queued.count)
        guard free > 0 else { return }
        let starting = queued.prefix(free)
        queued.removeFirst(free)
        starting.forEach(startTransfer)
    }

    private func startDueCalls() {
        guard !waiting.isEmpty else { return }
        let now = Clock.monotonicNanoseconds()
        let due = waiting.filter { $0.dueAt <= now }
        waiting.removeAll { $0.dueAt <= now }
        due.forEach(startTransfer)
    }

    /// How long the thread may sleep: until the next backoff ends, at most 1 s;
    /// not at all while started transfers wait for their first `perform`.
    private func nextWaitMs() -> Int32 {
        if !queued.isEmpty && multi.count < endpoints.maxCalls { return 0 }
        guard let next = waiting.map(\.dueAt).min() else { return 1000 }
        let now = Clock.monotonicNanoseconds()
        return next <= now ? 0 : Int32(min((next - now) / 1_000_000 + 1, 1000))
    }

    /// One receipt's conversation with Apple.
    private final class Call: @unchecked Sendable {
        let body: [UInt8]
        var sequence: AppleCallSequence
        let completion: Completion
        var environment: AppleEnvironment = .production
        var dueAt: UInt64 = 0
        var lastAnswer: [UInt8]?

        init(body: [UInt8], policy: AppleRetryPolicy, completion: @escaping Completion) {
            self.body = body
            self.sequence = AppleCallSequence(policy: policy)
            self.completion = completion
        }
    }
}

/// How a receipt's conversation with Apple ended.
struct AppleOutcome: Sendable {
    let verdict: AppleVerdict
    /// The environment asked last.
    let environment: AppleEnvironment
    /// Apple's last answer as received, for the audit row.
    let lastAnswer: [UInt8]?
}
