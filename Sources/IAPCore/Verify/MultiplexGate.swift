/// When a call to one origin (scheme, host and port) may start, so that HTTP/2
/// connections carry many calls each and no call waits on a connection that
/// never comes.
///
/// Why libcurl (7.88) needs this: a transfer added while the only connection to
/// a host is still in its TLS handshake either opens a connection of its own
/// (without `CURLOPT_PIPEWAIT`: 2,000 calls at once made 2,000 connections) or is
/// parked until a transfer finishes, one released per finished transfer (with
/// it: at 2,000 calls most stalled). And a transfer that finds a multiplexed
/// host's connections full while another connection is in its handshake may be
/// attached to that one before it can carry a request (lib/url.c,
/// `ConnectionExists`). So at most one connection per origin opens at a time,
/// and the other calls wait here until its request begins, which tells whether
/// the server multiplexes (ALPN "h2"); then up to `streamsPerConnection` calls
/// share each connection that carries calls, and one more opens a connection
/// only when they are all full. A server that does not multiplex gets one call
/// per connection, at once, as over HTTP/1.1.
///
/// A connection counts only while calls are on it: an idle one may have been
/// closed by the server without libcurl noticing yet, and the next call opens a
/// connection or finds the idle one itself.
public struct MultiplexGate: Sendable {
    /// How an admitted call is counted until it ends.
    public enum Admission: Sendable, Equatable {
        /// It may open a connection (or reuse an idle one): nothing else starts before its request begins.
        case opensConnection
        /// It goes on a connection that carries calls and has room.
        case sharesConnection
        /// The server does not multiplex: not counted.
        case unrestricted
    }

    /// What the origin's server speaks, as learnt from the first request.
    public enum ServerProtocol: Sendable, Equatable {
        case unknown
        case multiplexing
        case oneCallPerConnection
    }

    public let streamsPerConnection: Int
    public private(set) var serverProtocol = ServerProtocol.unknown
    private var connectionOpening = false
    /// Calls whose request has begun, per connection (only connections with calls on them).
    private var callsByConnection: [String: Int] = [:]
    /// `sharesConnection` calls admitted whose request has not begun yet.
    private var callsNotYetPlaced = 0

    public init(streamsPerConnection: Int) {
        self.streamsPerConnection = max(streamsPerConnection, 1)
    }

    /// Whether a call may start now, and how it counts; nil: it waits until a
    /// request begins or a call ends. `freshConnection`: the call must open a
    /// connection of its own (its last call broke down).
    public mutating func admit(freshConnection: Bool) -> Admission? {
        if serverProtocol == .oneCallPerConnection { return .unrestricted }
        if connectionOpening { return nil }
        if serverProtocol == .multiplexing && !freshConnection && hasRoom {
            callsNotYetPlaced += 1
            return .sharesConnection
        }
        connectionOpening = true
        return .opensConnection
    }

    /// An admitted call's request began on `connection` (any key naming the
    /// connection), `multiplexed` when it speaks HTTP/2.
    public mutating func requestBegan(_ admission: Admission, on connection: String, multiplexed: Bool) {
        switch admission {
        case .opensConnection: connectionOpening = false
        case .sharesConnection: callsNotYetPlaced -= 1
        case .unrestricted: return
        }
        guard multiplexed else {
            serverProtocol = .oneCallPerConnection
            return
        }
        serverProtocol = .multiplexing
        callsByConnection[connection, default: 0] += 1
    }

    /// An admitted call ended; `connection` is where its request began, nil if it never did.
    public mutating func ended(_ admission: Admission, on connection: String?) {
        guard let connection else {
            switch admission {
            case .opensConnection: connectionOpening = false
            case .sharesConnection: callsNotYetPlaced -= 1
            case .unrestricted: break
            }
            return
        }
        guard let calls = callsByConnection[connection] else { return }
        callsByConnection[connection] = calls > 1 ? calls - 1 : nil
    }

    /// The connections that carry calls, for the metrics and tests.
    public var busyConnections: Int { callsByConnection.count }

    private var hasRoom: Bool {
        let placed = callsByConnection.values.reduce(0, +)
        return placed + callsNotYetPlaced < callsByConnection.count * streamsPerConnection
    }
}
