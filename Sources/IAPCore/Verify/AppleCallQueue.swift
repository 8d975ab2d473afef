/// Where each of `AppleClient`'s calls stands, as a state machine with no I/O:
/// the client tells it what happened (a conversation handed over, a transfer
/// prepared or finished, time passing, the stop) and performs the actions it
/// returns with libcurl (start a conversation, prepare a transfer, hand one to
/// libcurl, end a call its deadline stops).
///
/// A call is in one place at a time:
/// - backing off: its conversation's next call waits for a backoff to end;
/// - queued: `maxCalls` (`AppleCallSchedule`) are under way or held, so it waits
///   its turn, first come first served;
/// - starting: an action about it is being performed (its conversation started,
///   its transfer prepared); it keeps its turn until the client reports back;
/// - held: its transfer is prepared and waits for its origin's `MultiplexGate`;
/// - under way: its transfer is in libcurl.
/// Between those, the conversation decides (in the client) what comes next.
///
/// Deadlines: a call starts a transfer only while its deadline leaves the
/// shortest call (`VerificationDeadline`); a queued or held call whose deadline
/// comes first, or whose backoff would end too late, ends with
/// `endByDeadline` rather than when a turn frees up.
///
/// Stop: nothing is cut short. Every call goes on to its end, and the thread
/// may end once no call is left (`mayEnd`).
public struct AppleCallQueue<Call: Hashable> {
    /// What the client does next for one call.
    public enum Action: Equatable {
        /// Start the call's conversation, then report its first step (`callsAgain` or `ended`).
        case startConversation(Call)
        /// Prepare the call's transfer with a timeout of at most `deadlineTimeoutMs` (and what is left
        /// of the conversation's budget), on a connection of its own when `freshConnection`; then report
        /// `prepared`, or the conversation's next step when it cannot be prepared.
        case prepare(Call, deadlineTimeoutMs: Int, freshConnection: Bool)
        /// Hand the call's prepared transfer to libcurl, as its gate counts it (`opensNewConnection`:
        /// on a connection of its own); report `notStarted` when libcurl refuses it.
        case add(Call, MultiplexGate.Admission)
        /// A held call's gate admits it: set its transfer's timeouts (at most `deadlineTimeoutMs`), then
        /// add it as `add` does; report `notStarted` when it cannot start.
        case addHeld(Call, MultiplexGate.Admission, deadlineTimeoutMs: Int)
        /// Its deadline leaves too little time: end it without asking Apple (again), taking back the
        /// transfer it prepared, then report `ended`.
        case endByDeadline(Call)
    }

    /// What is known of a call handed over and not yet ended.
    private struct Known {
        let deadline: Deadline
        /// The last call got no answer (a timeout, a broken or refused connection). The next goes on
        /// a new connection: Apple closes idle kept-alive connections, and one that still looks alive
        /// to libcurl (a TLS close_notify waiting to be read) breaks only once a request is sent on
        /// it. libcurl may not send that request again by itself (every call must be one the retry
        /// policy counts), so without a new connection each retry could take the next dead one from
        /// the pool and a request would spend all its attempts on them.
        var freshConnection = false
    }

    /// A transfer in libcurl: how its gate counts it, and the connection its request began on.
    private struct UnderWay {
        let origin: String
        let admission: MultiplexGate.Admission
        var connection: String?
    }

    private struct Queued {
        let call: Call
        /// Its conversation has started: it waits for a transfer, not for its first turn.
        let conversationStarted: Bool
    }

    public let schedule: AppleCallSchedule
    /// `IAP_APPLE_TIMEOUT_MS`: a call's longest timeout.
    private let appleTimeoutMs: Int
    private let streamsPerConnection: Int
    private let connectionsOpeningAtOnce: Int
    private var known: [Call: Known] = [:]
    private var backingOff: [(call: Call, dueNs: UInt64)] = []
    private var queued: [Queued] = []
    private var starting: Set<Call> = []
    /// Per origin: calls with a prepared transfer that wait for their gate, first come first served.
    private var held: [String: [Call]] = [:]
    public private(set) var heldCount = 0
    private var underWay: [Call: UnderWay] = [:]
    /// Per origin: when its calls may start.
    private var gates: [String: MultiplexGate] = [:]
    private var stopRequested = false

    public init(maxCalls: Int, appleTimeoutMs: Int, streamsPerConnection: Int, connectionsOpeningAtOnce: Int) {
        schedule = AppleCallSchedule(maxCalls: maxCalls)
        self.appleTimeoutMs = appleTimeoutMs
        self.streamsPerConnection = streamsPerConnection
        self.connectionsOpeningAtOnce = connectionsOpeningAtOnce
    }

    /// Calls whose transfer is in libcurl.
    public var underWayCount: Int { underWay.count }
    /// Calls waiting for a turn.
    public var queuedCount: Int { queued.count }
    /// The stop was asked and every call has ended.
    public var mayEnd: Bool { stopRequested && known.isEmpty }

    // MARK: Events

    /// A conversation handed over. Its budget is for talking to Apple, not for waiting its turn, so
    /// it starts only once one of `maxCalls` is free, and queues until then (the verification's
    /// deadline bounds that wait).
    public mutating func submitted(_ call: Call, deadline: Deadline) -> [Action] {
        known[call] = Known(deadline: deadline)
        guard hasRoom else {
            queued.append(Queued(call: call, conversationStarted: false))
            return []
        }
        return [startConversation(call)]
    }

    /// The call's conversation wants a call to Apple in `afterMs` milliseconds (now when 0).
    public mutating func callsAgain(_ call: Call, afterMs: Int, nowNs: UInt64) -> [Action] {
        starting.remove(call)
        guard afterMs > 0 else { return startTransfer(call, nowNs: nowNs) }
        let dueNs = nowNs + UInt64(afterMs) * 1_000_000
        // A retry that could not start in time after its backoff ends now.
        guard callTimeoutMs(call, atNs: dueNs) != nil else { return [.endByDeadline(call)] }
        backingOff.append((call, dueNs))
        return []
    }

    /// The call's conversation is over (the client completes it).
    public mutating func ended(_ call: Call) {
        starting.remove(call)
        known[call] = nil
    }

    /// The call's transfer is prepared for `origin`: it starts if the origin's gate admits it, and
    /// is held until then.
    public mutating func prepared(_ call: Call, origin: String) -> [Action] {
        starting.remove(call)
        let firstGate = MultiplexGate(
            streamsPerConnection: streamsPerConnection, maxConnectionsOpening: connectionsOpeningAtOnce)
        let fresh = freshConnection(call)
        let callsWaiting = held[origin]?.count ?? 0
        guard let admission = gates[origin, default: firstGate].admit(freshConnection: fresh, callsWaiting: callsWaiting)
        else {
            held[origin, default: []].append(call)
            heldCount += 1
            return []
        }
        underWay[call] = UnderWay(origin: origin, admission: admission)
        return [.add(call, admission)]
    }

    /// The transfer of an `add` or `addHeld` did not start: its gate no longer counts it.
    public mutating func notStarted(_ call: Call) {
        guard let transfer = underWay.removeValue(forKey: call) else { return }
        gates[transfer.origin]?.ended(transfer.admission, on: nil)
    }

    /// The call's request began on `connection`, `multiplexed` when it speaks HTTP/2.
    public mutating func requestBegan(_ call: Call, on connection: String, multiplexed: Bool) {
        guard var transfer = underWay[call], transfer.connection == nil else { return }
        transfer.connection = connection
        underWay[call] = transfer
        gates[transfer.origin]?.requestBegan(transfer.admission, on: connection, multiplexed: multiplexed)
    }

    /// libcurl closed `connection`.
    public mutating func connectionClosed(_ connection: String) {
        for origin in gates.keys {
            gates[origin]?.closed(connection)
        }
    }

    /// The call's transfer finished, `answered` when Apple answered (with any HTTP status); the client
    /// then reports the conversation's next step.
    public mutating func finished(_ call: Call, answered: Bool) {
        known[call]?.freshConnection = !answered
        guard let transfer = underWay.removeValue(forKey: call) else { return }
        gates[transfer.origin]?.ended(transfer.admission, on: transfer.connection)
    }

    /// Time passed, before the client looks at the network: the calls whose backoff is over start,
    /// and the queued and held calls whose deadline has come end, so that they are answered then
    /// rather than when a turn frees up (only the head of the queue is looked at: those behind it
    /// come no sooner).
    public mutating func tick(nowNs: UInt64) -> [Action] {
        let due = backingOff.filter { $0.dueNs <= nowNs }
        backingOff.removeAll { $0.dueNs <= nowNs }
        var actions = due.flatMap { startTransfer($0.call, nowNs: nowNs) }
        while let first = queued.first, callTimeoutMs(first.call, atNs: nowNs) == nil {
            queued.removeFirst()
            actions.append(.endByDeadline(first.call))
        }
        for (origin, calls) in held {
            let expired = calls.filter { callTimeoutMs($0, atNs: nowNs) == nil }
            guard !expired.isEmpty else { continue }
            let left = calls.filter { callTimeoutMs($0, atNs: nowNs) != nil }
            held[origin] = left.isEmpty ? nil : left
            heldCount -= expired.count
            actions += expired.map(Action.endByDeadline)
        }
        return actions
    }

    /// Transfers ended, requests began, connections closed: the held calls their gates now admit
    /// start (first come first served per origin), then as many queued calls as there is room for.
    public mutating func startWaiting(nowNs: UInt64) -> [Action] {
        var actions = startHeld(nowNs: nowNs)
        let free = schedule.startable(queued: queued.count, underWay: underWay.count, held: heldCount + starting.count)
        let turns = queued.prefix(free)
        queued.removeFirst(free)
        for turn in turns {
            actions += turn.conversationStarted ? startTransfer(turn.call, nowNs: nowNs) : [startConversation(turn.call)]
        }
        return actions
    }

    /// The service stops: the calls handed over go on to their end, after which `mayEnd`.
    public mutating func stop() {
        stopRequested = true
    }

    /// How long the client may wait on the network (`AppleCallSchedule.waitMs`): until the next
    /// backoff ends or the first queued or held call's deadline nears.
    public func sleepMs(nowNs: UInt64) -> Int32 {
        let lastStarts = (queued.prefix(1).map(\.call) + held.values.compactMap(\.first)).map(lastStartNs)
        return schedule.waitMs(
            nowNs: nowNs, queued: queued.count, underWay: underWay.count, held: heldCount + starting.count,
            wakeAtNs: backingOff.map(\.dueNs) + lastStarts)
    }

    // MARK: Decisions

    /// Calls under way, held or starting leave room for one more.
    private var hasRoom: Bool {
        schedule.hasRoom(underWay: underWay.count, held: heldCount + starting.count)
    }

    private mutating func startConversation(_ call: Call) -> Action {
        starting.insert(call)
        return .startConversation(call)
    }

    /// A transfer for the call now if its deadline allows and there is room; queued without room.
    private mutating func startTransfer(_ call: Call, nowNs: UInt64) -> [Action] {
        guard let deadlineTimeoutMs = callTimeoutMs(call, atNs: nowNs) else { return [.endByDeadline(call)] }
        guard hasRoom else {
            queued.append(Queued(call: call, conversationStarted: true))
            return []
        }
        starting.insert(call)
        return [.prepare(call, deadlineTimeoutMs: deadlineTimeoutMs, freshConnection: freshConnection(call))]
    }

    /// The held calls their gates admit, each started with what is left of its time or ended by its
    /// deadline (which frees its gate for the next: hence the rounds).
    private mutating func startHeld(nowNs: UInt64) -> [Action] {
        var actions: [Action] = []
        while heldCount > 0 {
            var admitted: [(call: Call, origin: String, admission: MultiplexGate.Admission)] = []
            for origin in held.keys {
                guard var calls = held[origin] else { continue }
                var taken = 0
                while taken < calls.count {
                    let fresh = freshConnection(calls[taken])
                    guard let admission = gates[origin]?.admit(freshConnection: fresh, callsWaiting: calls.count - taken - 1)
                    else { break }
                    admitted.append((calls[taken], origin, admission))
                    taken += 1
                }
                guard taken > 0 else { continue }
                calls.removeFirst(taken)
                held[origin] = calls.isEmpty ? nil : calls
                heldCount -= taken
            }
            guard !admitted.isEmpty else { break }
            var gateFreed = false
            for (call, origin, admission) in admitted {
                if let deadlineTimeoutMs = callTimeoutMs(call, atNs: nowNs) {
                    underWay[call] = UnderWay(origin: origin, admission: admission)
                    actions.append(.addHeld(call, admission, deadlineTimeoutMs: deadlineTimeoutMs))
                } else {
                    gates[origin]?.ended(admission, on: nil)
                    gateFreed = true
                    actions.append(.endByDeadline(call))
                }
            }
            guard gateFreed else { break }
        }
        return actions
    }

    private func freshConnection(_ call: Call) -> Bool {
        known[call]?.freshConnection ?? false
    }

    /// The timeout of the call if it started at `nowNs`; nil when its deadline leaves too little time.
    private func callTimeoutMs(_ call: Call, atNs nowNs: UInt64) -> Int? {
        let deadline = known[call]?.deadline ?? .never
        return VerificationDeadline.callTimeoutMs(appleTimeoutMs: appleTimeoutMs, remainingMs: deadline.remainingMs(nowNs: nowNs))
    }

    private func lastStartNs(_ call: Call) -> UInt64 {
        AppleCallSchedule.lastStartNs(deadlineNs: (known[call]?.deadline ?? .never).atNs, appleTimeoutMs: appleTimeoutMs)
    }
}
