import Glibc
import Curl
import IAPCore
import Synchronization

/// Every call to Apple (verifyReceipt, the App Store Server API), driven by one
/// thread over libcurl's multi interface: a call waiting seconds for Apple
/// holds a socket and a few kilobytes, not a thread. Connections and TLS
/// sessions are kept and reused.
///
/// Callers hand over a conversation (`AppleConversation`: a receipt, a Server
/// API request) whose completion runs on the client's thread when its call
/// sequence (production, sandbox, retries) is over, and must only hand the
/// result on (it must not block).
///
/// Backpressure: calls waiting for their first turn (beyond `maxCalls` under
/// way) are bounded by `waitingLimit`, and `verify` refuses one more. A call
/// whose deadline leaves too little time starts no transfer: it ends
/// `unavailable`, and no call runs past its deadline.
///
/// HTTP/2: calls to one origin share connections, up to
/// `streamsPerConnection` each; `MultiplexGate` decides when each may start
/// (one connection opening at a time, and every call on a connection that has
/// room). A server that answers ALPN with HTTP/1.1 gets a connection per call.
///
/// Where each call stands (backing off, queued, held, under way) and what
/// follows each event is `AppleCallQueue`'s, a state machine with no I/O; this
/// class performs its actions with libcurl and the conversations.
final class AppleClient: Worker, @unchecked Sendable {
    /// Requests one HTTP/2 connection carries at once (Apple's and the simulator's limit is higher).
    static let streamsPerConnection = 100
    /// Connections opening at once to one origin. With 8, a 2,000-call burst
    /// reached 2,000 in flight sooner, but 3 runs of 8 ended with 864
    /// connections (cause not found), so they open one after another (20 in
    /// 1-1.7 s on the loaded 2-core machine).
    static let connectionsOpeningAtOnce = 1

    private let endpoints: AppleEndpoints
    private let multi: CurlMulti
    /// Calls handed over by other threads, not yet started.
    private let submitted = Mutex<[Call]>([])
    /// Calls handed over and not yet under way for the first time; shared with the metrics' sampler.
    private let waitingTurn = Locked(QueueUsage())
    private let waitingLimit: QueueLimit
    // The rest belongs to the client's own thread.
    /// Where each call stands, and what to do next for it.
    private var calls: AppleCallQueue<Call>
    private var idleTransfers: [CurlTransfer] = []
    /// Transfers whose request began since the last look (`CurlTransfer.onRequestBegun`).
    private var begun: [CurlTransfer] = []

    init(endpoints: AppleEndpoints, waitingLimit: QueueLimit = QueueLimit()) throws {
        self.endpoints = endpoints
        self.calls = AppleCallQueue(
            maxCalls: endpoints.maxCalls, appleTimeoutMs: endpoints.retryPolicy.budgetMs,
            streamsPerConnection: Self.streamsPerConnection, connectionsOpeningAtOnce: Self.connectionsOpeningAtOnce)
        self.waitingLimit = waitingLimit
        self.multi = try CurlMulti(maxConnections: endpoints.maxCalls, maxStreamsPerConnection: Self.streamsPerConnection)
        ServiceMetrics.watchQueue("apple_waiting") { [waitingTurn] in waitingTurn.withLock { $0.jobs } }
    }

    var threadName: String { "apple-client" }

    /// Verifies a receipt with Apple before `deadline`; `completion` gets the
    /// outcome. False when too many calls wait their turn: the call is refused
    /// and `completion` never runs.
    func verify(
        receiptBase64: String, deadline: Deadline = .never, completion: @escaping ReceiptConversation.Completion
    ) -> Bool {
        submit(ReceiptConversation(receiptBase64: receiptBase64, endpoints: endpoints, deadline: deadline, completion: completion))
    }

    /// Runs `conversation` on the client's thread. False when too many calls
    /// wait their turn: it is refused and never completes.
    func submit(_ conversation: any AppleConversation) -> Bool {
        guard waitingTurn.withLock({ $0.admit(conversation.admittedBytes, under: waitingLimit) }) else {
            ServiceMetrics.queueRejected("apple_waiting")
            return false
        }
        let call = Call(conversation)
        // One wake-up per batch the recorder hands over, not one per call: the thread takes every
        // submitted call after each wake-up, so a call added to a list that was not empty is taken
        // with the one that woke it (a write and a read of the wake pipe saved per call).
        let wasEmpty = submitted.withLock { calls in
            defer { calls.append(call) }
            return calls.isEmpty
        }
        if wasEmpty { multi.wakeUp() }
        return true
    }

    /// Ends the thread's wait on the network.
    func wake() {
        multi.wakeUp()
    }

    /// Once stopped, the thread ends when every call under way has completed. `WorkerThreads.stop`
    /// waits for it: a process that exits while this thread still closes its TLS connections runs
    /// OpenSSL's and libmariadb's exit handlers beside it (seen: "double free or corruption" when
    /// `iapctl retry-pending` returned).
    func run(_ stop: StopRequest) {
        while true {
            for call in submitted.withLock({ calls in defer { calls.removeAll() }; return calls }) {
                perform(calls.submitted(call, deadline: call.conversation.deadline))
            }
            perform(calls.tick(nowNs: SystemClock.monotonicNanoseconds()))
            do {
                let finished = try multi.perform()
                noteRequestsBegun()
                for (transfer, outcome) in finished {
                    complete(transfer, outcome)
                }
                perform(calls.startWaiting(nowNs: SystemClock.monotonicNanoseconds()))
                if stop.isRequested { calls.stop() }
                if calls.mayEnd && submitted.withLock({ $0.isEmpty }) {
                    return
                }
                try multi.wait(timeoutMs: calls.sleepMs(nowNs: SystemClock.monotonicNanoseconds()))
            } catch {
                Log.event("Apple client: \(error)")
            }
        }
    }

    /// Does what `AppleCallQueue` decided, in order; what each leads to is done before the next.
    private func perform(_ actions: [AppleCallQueue<Call>.Action]) {
        for action in actions {
            switch action {
            case .startConversation(let call):
                advance(call, to: call.conversation.start(atMs: Self.nowMs()))
            case .prepare(let call, let deadlineTimeoutMs, let freshConnection):
                prepare(call, deadlineTimeoutMs: deadlineTimeoutMs, freshConnection: freshConnection)
            case .add(let call, let admission):
                add(call, admission)
            case .addHeld(let call, let admission, let deadlineTimeoutMs):
                addHeld(call, admission, deadlineTimeoutMs: deadlineTimeoutMs)
            case .endByDeadline(let call):
                recycle(call)
                end(call)
            }
        }
    }

    /// Moves a call to its next step: a call to Apple now or later, or the end.
    private func advance(_ call: Call, to step: AppleConversationStep) {
        switch step {
        case .call(let environment, let afterMs):
            call.environment = environment
            perform(calls.callsAgain(call, afterMs: afterMs, nowNs: SystemClock.monotonicNanoseconds()))
        case .finished:
            calls.ended(call)
            releaseTurn(call)
            call.conversation.complete()
        }
    }

    /// Prepares the call's transfer. The call may only use what is left of the conversation's
    /// budget, and never run past the deadline.
    private func prepare(_ call: Call, deadlineTimeoutMs: Int, freshConnection: Bool) {
        let now = Self.nowMs()
        let timeoutMs = min(call.conversation.timeLeftMs(atMs: now), deadlineTimeoutMs)
        guard timeoutMs > 0 else {
            return advance(call, to: call.conversation.next(after: .transportFailure(.timeout), retryAfterUnixMs: nil, atMs: now))
        }
        let transfer: CurlTransfer
        do {
            transfer = try idleTransfers.popLast() ?? newTransfer()
            try call.conversation.prepare(transfer, for: call.environment, timeoutMs: timeoutMs)
            try transfer.useNewConnection(freshConnection)
        } catch {
            return couldNotStart(call, error)
        }
        transfer.context = call
        call.transfer = transfer
        perform(calls.prepared(call, origin: transfer.origin))
    }

    private func newTransfer() throws(CurlError) -> CurlTransfer {
        let transfer = try CurlTransfer(http2: true)
        transfer.onRequestBegun = { [unowned self] transfer in begun.append(transfer) }
        return transfer
    }

    /// Hands a prepared, admitted transfer to libcurl.
    private func add(_ call: Call, _ admission: MultiplexGate.Admission) {
        guard let transfer = call.transfer else { return }
        do {
            if admission == .opensNewConnection {
                try transfer.useNewConnection(true)
            }
            try multi.add(transfer)
        } catch {
            calls.notStarted(call)
            return couldNotStart(call, error)
        }
        call.startedAtNs = SystemClock.monotonicNanoseconds()
        ServiceMetrics.appleCallsInFlight(multi.count)
        releaseTurn(call)
    }

    /// Starts a held call with what is left of its time, or ends it as a call would have.
    private func addHeld(_ call: Call, _ admission: MultiplexGate.Admission, deadlineTimeoutMs: Int) {
        guard let transfer = call.transfer else { return }
        let now = Self.nowMs()
        let timeoutMs = min(call.conversation.timeLeftMs(atMs: now), deadlineTimeoutMs)
        guard timeoutMs > 0 else {
            calls.notStarted(call)
            recycle(call)
            return advance(call, to: call.conversation.next(after: .transportFailure(.timeout), retryAfterUnixMs: nil, atMs: now))
        }
        do {
            try transfer.setTimeouts(connectTimeoutMs: endpoints.connectTimeoutMs(within: timeoutMs), totalTimeoutMs: timeoutMs)
        } catch {
            calls.notStarted(call)
            return couldNotStart(call, error)
        }
        add(call, admission)
    }

    private func couldNotStart(_ call: Call, _ error: any Error) {
        Log.event("Apple call could not start: \(error)")
        call.transfer?.context = nil
        call.transfer = nil
        advance(call, to: call.conversation.next(after: .transportFailure(.connection), retryAfterUnixMs: nil, atMs: Self.nowMs()))
    }

    /// Tells the gates where the requests that began went, and whether their
    /// connection multiplexes, and which connections closed.
    private func noteRequestsBegun() {
        for connection in multi.takeClosedConnections() {
            calls.connectionClosed(connection)
        }
        for transfer in begun {
            guard let call = transfer.context as? Call, let connection = transfer.connection else { continue }
            calls.requestBegan(call, on: connection.key, multiplexed: connection.multiplexed)
        }
        begun.removeAll(keepingCapacity: true)
    }

    /// Takes back the transfer a call prepared and never started.
    private func recycle(_ call: Call) {
        guard let transfer = call.transfer else { return }
        transfer.context = nil
        call.transfer = nil
        idleTransfers.append(transfer)
    }

    private func complete(_ transfer: CurlTransfer, _ outcome: CurlTransfer.Outcome) {
        guard let call = transfer.context as? Call else { return }
        transfer.context = nil
        call.transfer = nil
        let result: AppleCallResult
        var retryAfterUnixMs: Int64?
        switch outcome {
        case .answered(let httpStatus):
            result = .answered(httpStatus: httpStatus, body: transfer.responseBody)
            if httpStatus == 429 {
                retryAfterUnixMs = transfer.responseHeader("Retry-After").flatMap { Int64($0) }
            }
        case .timedOut:
            result = .transportFailure(.timeout)
        case .tlsFailed:
            result = .transportFailure(.tls)
        case .connectionFailed:
            result = .transportFailure(.connection)
        }
        var answered = false
        if case .answered = outcome { answered = true }
        calls.finished(call, answered: answered)
        idleTransfers.append(transfer)
        recordMetrics(of: call, outcome)
        advance(call, to: call.conversation.next(after: result, retryAfterUnixMs: retryAfterUnixMs, atMs: Self.nowMs()))
    }

    /// One call ended: its count, status and latency; a Server API 429.
    private func recordMetrics(of call: Call, _ outcome: CurlTransfer.Outcome) {
        let status: String
        switch outcome {
        case .answered(let httpStatus): status = String(httpStatus)
        case .timedOut: status = "timeout"
        case .tlsFailed: status = "tls"
        case .connectionFailed: status = "connection"
        }
        let endpoint = call.conversation.endpointLabel
        ServiceMetrics.appleCallEnded(
            endpoint: endpoint, environment: call.environment, status: status,
            nanoseconds: SystemClock.monotonicNanoseconds() - call.startedAtNs)
        if case .answered(429) = outcome, endpoint == AppleConversationEndpoint.serverAPI {
            ServiceMetrics.serverAPIRateLimited(environment: call.environment)
        }
        ServiceMetrics.appleCallsInFlight(multi.count)
    }

    /// The monotonic clock in milliseconds, the unit of the call sequences.
    private static func nowMs() -> Int {
        Int(SystemClock.monotonicNanoseconds() / 1_000_000)
    }

    /// Ends a call its deadline stops, without asking Apple (again):
    /// `unavailable` (a receipt stays unverified and is answered `retry_later`).
    private func end(_ call: Call) {
        call.conversation.stopByDeadline()
        advance(call, to: .finished)
    }

    /// The call is under way, or over: it no longer counts against `waitingLimit`.
    private func releaseTurn(_ call: Call) {
        guard call.waitsItsTurn else { return }
        call.waitsItsTurn = false
        waitingTurn.withLock { $0.release(call.conversation.admittedBytes) }
    }

    /// A conversation handed over, and what the thread holds for it; `AppleCallQueue` knows where it
    /// stands by its identity.
    private final class Call: Hashable, @unchecked Sendable {
        let conversation: any AppleConversation
        var environment: AppleEnvironment = .production
        /// When its transfer under way started (monotonic ns), for its latency.
        var startedAtNs: UInt64 = 0
        /// Counted in `waitingTurn` until its first transfer starts.
        var waitsItsTurn = true
        /// Its prepared transfer, from when it is prepared until it completes.
        var transfer: CurlTransfer?

        init(_ conversation: any AppleConversation) {
            self.conversation = conversation
        }

        static func == (left: Call, right: Call) -> Bool { left === right }
        func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    }
}
