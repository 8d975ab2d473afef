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
final class AppleClient: Worker, @unchecked Sendable {
    /// Requests one HTTP/2 connection carries at once (Apple's and the simulator's limit is higher).
    static let streamsPerConnection = 100
    /// Connections opening at once to one origin. With 8, a 2,000-call burst
    /// reached 2,000 in flight sooner, but 3 runs of 8 ended with 864
    /// connections (cause not found), so they open one after another (20 in
    /// 1-1.7 s on the loaded 2-core machine).
    static let connectionsOpeningAtOnce = 1

    private let endpoints: AppleEndpoints
    private let schedule: AppleCallSchedule
    private let multi: CurlMulti
    /// Calls handed over by other threads, not yet started.
    private let submitted = Mutex<[Call]>([])
    /// Calls handed over and not yet under way for the first time; shared with the metrics' sampler.
    private let waitingTurn = Locked(QueueUsage())
    private let waitingLimit: QueueLimit
    // The rest belongs to the client's own thread.
    private var waiting: [Call] = []
    /// Calls ready to go while `maxCalls` are under way, first come first served.
    private var queued: [Call] = []
    private var idleTransfers: [CurlTransfer] = []
    /// Per origin: when its calls may start.
    private var gates: [String: MultiplexGate] = [:]
    /// Per origin: calls with a prepared transfer that wait for their gate, first come first served.
    private var held: [String: [Call]] = [:]
    private var heldCount = 0
    /// Transfers whose request began since the last look (`CurlTransfer.onRequestBegun`).
    private var begun: [CurlTransfer] = []

    init(endpoints: AppleEndpoints, waitingLimit: QueueLimit = QueueLimit()) throws {
        self.endpoints = endpoints
        self.schedule = AppleCallSchedule(maxCalls: endpoints.maxCalls)
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
                takeFirstTurn(call)
            }
            startDueCalls()
            endExpiredQueuedCalls()
            endExpiredHeldCalls()
            do {
                let finished = try multi.perform()
                noteRequestsBegun()
                for (transfer, outcome) in finished {
                    complete(transfer, outcome)
                }
                startHeldCalls()
                startQueuedCalls()
                if stop.isRequested && multi.count == 0 && waiting.isEmpty && queued.isEmpty && heldCount == 0
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
    private func advance(_ call: Call, to step: AppleConversationStep) {
        switch step {
        case .call(let environment, let afterMs) where afterMs > 0:
            call.environment = environment
            call.dueAt = SystemClock.monotonicNanoseconds() + UInt64(afterMs) * 1_000_000
            // A retry that could not start in time after its backoff ends now.
            guard callTimeoutMs(call, at: call.dueAt) != nil else { return end(call) }
            waiting.append(call)
        case .call(let environment, _):
            call.environment = environment
            startTransfer(call)
        case .finished:
            releaseTurn(call)
            call.conversation.complete()
        }
    }

    private func startTransfer(_ call: Call) {
        guard let deadlineTimeoutMs = callTimeoutMs(call, at: SystemClock.monotonicNanoseconds()) else { return end(call) }
        guard schedule.hasRoom(underWay: multi.count, held: heldCount) else {
            queued.append(call)
            return
        }
        // The call may only use what is left of the conversation's budget, and never run past the deadline.
        let now = Self.nowMs()
        let timeoutMs = min(call.conversation.timeLeftMs(atMs: now), deadlineTimeoutMs)
        guard timeoutMs > 0 else {
            return advance(call, to: call.conversation.next(after: .transportFailure(.timeout), retryAfterUnixMs: nil, atMs: now))
        }
        do {
            let transfer = try idleTransfers.popLast() ?? newTransfer()
            try call.conversation.prepare(transfer, for: call.environment, timeoutMs: timeoutMs)
            try transfer.useNewConnection(call.lastCallBrokeDown)
            transfer.context = call
            call.transfer = transfer
            let origin = transfer.origin
            let firstGate = MultiplexGate(
                streamsPerConnection: Self.streamsPerConnection, maxConnectionsOpening: Self.connectionsOpeningAtOnce)
            guard let admission = gates[origin, default: firstGate]
                .admit(freshConnection: call.lastCallBrokeDown, callsWaiting: held[origin]?.count ?? 0)
            else {
                held[origin, default: []].append(call)
                heldCount += 1
                return
            }
            try add(call, transfer, admission)
        } catch {
            couldNotStart(call, error)
        }
    }

    /// Starts a handed-over conversation once one of the `maxCalls` is free, and
    /// queues it until then. Its budget (`IAP_APPLE_TIMEOUT_MS`) is for talking
    /// to Apple, not for waiting its turn: the verification's deadline bounds
    /// that wait (`VerificationDeadline` allows two budgets for it). (Started on
    /// arrival, 400 calls queued behind 8 at Apple's 1 s all ran out at 2 s, and
    /// the last ones called Apple with a few milliseconds left, for nothing.)
    private func takeFirstTurn(_ call: Call) {
        guard schedule.hasRoom(underWay: multi.count, held: heldCount) else {
            queued.append(call)
            return
        }
        call.conversationStarted = true
        advance(call, to: call.conversation.start(atMs: Self.nowMs()))
    }

    private func newTransfer() throws(CurlError) -> CurlTransfer {
        let transfer = try CurlTransfer(http2: true)
        transfer.onRequestBegun = { [unowned self] transfer in begun.append(transfer) }
        return transfer
    }

    /// Hands a prepared, admitted transfer to libcurl.
    private func add(_ call: Call, _ transfer: CurlTransfer, _ admission: MultiplexGate.Admission) throws(CurlError) {
        call.admission = admission
        call.connection = nil
        do {
            if admission == .opensNewConnection {
                try transfer.useNewConnection(true)
            }
            try multi.add(transfer)
        } catch {
            call.admission = nil
            gates[transfer.origin]?.ended(admission, on: nil)
            throw error
        }
        call.startedAtNs = SystemClock.monotonicNanoseconds()
        ServiceMetrics.appleCallsInFlight(multi.count)
        releaseTurn(call)
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
            for origin in gates.keys {
                gates[origin]?.closed(connection)
            }
        }
        for transfer in begun {
            guard let call = transfer.context as? Call, let admission = call.admission, call.connection == nil,
                  let connection = transfer.connection
            else { continue }
            call.connection = connection.key
            gates[transfer.origin]?.requestBegan(admission, on: connection.key, multiplexed: connection.multiplexed)
        }
        begun.removeAll(keepingCapacity: true)
    }

    /// Starts the held calls their gates now admit, first come first served per origin.
    private func startHeldCalls() {
        while heldCount > 0 {
            var admitted: [(Call, MultiplexGate.Admission)] = []
            for origin in held.keys {
                guard var calls = held[origin] else { continue }
                var taken = 0
                while taken < calls.count,
                      let admission = gates[origin]?.admit(
                          freshConnection: calls[taken].lastCallBrokeDown, callsWaiting: calls.count - taken - 1)
                {
                    admitted.append((calls[taken], admission))
                    taken += 1
                }
                guard taken > 0 else { continue }
                calls.removeFirst(taken)
                held[origin] = calls.isEmpty ? nil : calls
                heldCount -= taken
            }
            guard !admitted.isEmpty else { return }
            for (call, admission) in admitted {
                startHeld(call, admission)
            }
        }
    }

    /// Starts a held call with what is left of its time, or ends it as a call would have.
    private func startHeld(_ call: Call, _ admission: MultiplexGate.Admission) {
        guard let transfer = call.transfer else { return }
        let now = Self.nowMs()
        let deadlineTimeoutMs = callTimeoutMs(call, at: SystemClock.monotonicNanoseconds())
        let timeoutMs = min(call.conversation.timeLeftMs(atMs: now), deadlineTimeoutMs ?? 0)
        guard timeoutMs > 0 else {
            gates[transfer.origin]?.ended(admission, on: nil)
            recycle(call)
            guard deadlineTimeoutMs != nil else { return end(call) }
            return advance(call, to: call.conversation.next(after: .transportFailure(.timeout), retryAfterUnixMs: nil, atMs: now))
        }
        do {
            try transfer.setTimeouts(connectTimeoutMs: endpoints.connectTimeoutMs(within: timeoutMs), totalTimeoutMs: timeoutMs)
        } catch {
            gates[transfer.origin]?.ended(admission, on: nil)
            return couldNotStart(call, error)
        }
        do {
            try add(call, transfer, admission)
        } catch {
            couldNotStart(call, error)
        }
    }

    /// Ends the held calls whose deadline has come.
    private func endExpiredHeldCalls() {
        guard heldCount > 0 else { return }
        let now = SystemClock.monotonicNanoseconds()
        for (origin, calls) in held {
            let expired = calls.filter { callTimeoutMs($0, at: now) == nil }
            guard !expired.isEmpty else { continue }
            let left = calls.filter { callTimeoutMs($0, at: now) != nil }
            held[origin] = left.isEmpty ? nil : left
            heldCount -= expired.count
            for call in expired {
                recycle(call)
                end(call)
            }
        }
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
        if let admission = call.admission {
            gates[transfer.origin]?.ended(admission, on: call.connection)
            call.admission = nil
        }
        let result: AppleCallResult
        var retryAfterUnixMs: Int64?
        if case .answered = outcome { call.lastCallBrokeDown = false } else { call.lastCallBrokeDown = true }
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

    /// The timeout of `call` if it started at `nanoseconds`; nil when its
    /// deadline leaves too little time (`VerificationDeadline`).
    private func callTimeoutMs(_ call: Call, at nanoseconds: UInt64) -> Int? {
        VerificationDeadline.callTimeoutMs(
            appleTimeoutMs: endpoints.retryPolicy.budgetMs, remainingMs: call.deadline.remainingMs(nowNs: nanoseconds))
    }

    /// The last moment `call` may start (`AppleCallSchedule`).
    private func lastStartNs(_ call: Call) -> UInt64 {
        AppleCallSchedule.lastStartNs(deadlineNs: call.deadline.atNs, appleTimeoutMs: endpoints.retryPolicy.budgetMs)
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

    /// Ends the calls at the head of the queue whose deadline has come, so that
    /// they are answered then rather than when a transfer frees up.
    private func endExpiredQueuedCalls() {
        let now = SystemClock.monotonicNanoseconds()
        while let first = queued.first, callTimeoutMs(first, at: now) == nil {
            queued.removeFirst()
            end(first)
        }
    }

    private func startQueuedCalls() {
        let free = schedule.startable(queued: queued.count, underWay: multi.count, held: heldCount)
        guard free > 0 else { return }
        let starting = queued.prefix(free)
        queued.removeFirst(free)
        for call in starting {
            if call.conversationStarted { startTransfer(call) } else { takeFirstTurn(call) }
        }
    }

    private func startDueCalls() {
        guard !waiting.isEmpty else { return }
        let now = SystemClock.monotonicNanoseconds()
        let due = waiting.filter { $0.dueAt <= now }
        waiting.removeAll { $0.dueAt <= now }
        due.forEach(startTransfer)
    }

    /// How long the thread may sleep (`AppleCallSchedule.waitMs`): until the
    /// next backoff ends or the first queued or held call's deadline nears.
    private func nextWaitMs() -> Int32 {
        let heldFirst = held.values.compactMap { $0.first.map(lastStartNs) }
        return schedule.waitMs(
            nowNs: SystemClock.monotonicNanoseconds(), queued: queued.count, underWay: multi.count, held: heldCount,
            wakeAtNs: waiting.map(\.dueAt) + queued.prefix(1).map(lastStartNs) + heldFirst)
    }

    /// A conversation's place in the client's queues.
    private final class Call: @unchecked Sendable {
        let conversation: any AppleConversation
        var environment: AppleEnvironment = .production
        var dueAt: UInt64 = 0
        /// When its transfer under way started (monotonic ns), for its latency.
        var startedAtNs: UInt64 = 0
        /// Counted in `waitingTurn` until its first transfer starts.
        var waitsItsTurn = true
        /// Its conversation has started (`takeFirstTurn`); in `queued` until then.
        var conversationStarted = false
        /// The last call got no answer (a timeout, a broken or refused connection).
        /// The next goes on a new connection: Apple closes idle kept-alive
        /// connections, and one that still looks alive to libcurl (a TLS
        /// close_notify waiting to be read) breaks only once a request is sent on
        /// it. libcurl may not send that request again by itself (every call must
        /// be one the retry policy counts, `CurlTransfer`), so without a new
        /// connection each retry could take the next dead one from the pool and a
        /// request would spend all its attempts on them.
        var lastCallBrokeDown = false
        /// Its prepared transfer, from when it is prepared until it completes.
        var transfer: CurlTransfer?
        /// How its gate counts its transfer under way.
        var admission: MultiplexGate.Admission?
        /// The connection its transfer's request began on.
        var connection: String?

        var deadline: Deadline { conversation.deadline }

        init(_ conversation: any AppleConversation) {
            self.conversation = conversation
        }
    }
}
