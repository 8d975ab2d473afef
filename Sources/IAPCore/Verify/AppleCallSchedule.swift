/// When `AppleClient`'s calls may start, and how long its thread may sleep.
/// At most `maxCalls` (`IAP_APPLE_MAX_CALLS`) calls are under way or held
/// with a prepared transfer for their connection (`MultiplexGate`); the others
/// wait in a queue, first come first served, until one of those ends. Values
/// only: `AppleCallQueue` counts its calls and asks.
public struct AppleCallSchedule: Equatable, Sendable {
    public let maxCalls: Int

    public init(maxCalls: Int) {
        self.maxCalls = maxCalls
    }

    /// A call may start now: fewer than `maxCalls` are under way or held.
    public func hasRoom(underWay: Int, held: Int) -> Bool {
        underWay + held < maxCalls
    }

    /// How many of the `queued` calls start now, from the head of the queue.
    public func startable(queued: Int, underWay: Int, held: Int) -> Int {
        max(0, min(maxCalls - underWay - held, queued))
    }

    /// How long the thread may sleep on the network, in milliseconds: not at
    /// all while a queued call could start; else until the first of `wakeAtNs`
    /// (monotonic: a backoff's end, a waiting call's last moment to start),
    /// rounded up, at most 1 s.
    public func waitMs(nowNs: UInt64, queued: Int, underWay: Int, held: Int, wakeAtNs: [UInt64]) -> Int32 {
        if queued > 0 && hasRoom(underWay: underWay, held: held) { return 0 }
        guard let next = wakeAtNs.min() else { return 1000 }
        return next <= nowNs ? 0 : Int32(min((next - nowNs) / 1_000_000 + 1, 1000))
    }

    /// The last moment (monotonic nanoseconds) a call whose deadline is at
    /// `deadlineNs` may start: the shortest call (`VerificationDeadline`)
    /// must still fit before it.
    public static func lastStartNs(deadlineNs: UInt64, appleTimeoutMs: Int) -> UInt64 {
        let shortestCallNs = UInt64(VerificationDeadline.shortestCallMs(appleTimeoutMs: appleTimeoutMs)) * 1_000_000
        return deadlineNs > shortestCallNs ? deadlineNs - shortestCallNs : 0
    }
}
