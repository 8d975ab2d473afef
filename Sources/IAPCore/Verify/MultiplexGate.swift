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
/// `ConnectionExists`). So the first call to an origin goes alone, and the
/// others wait here until its request begins, which tells whether the server
/// multiplexes (ALPN "h2"). Then up to `streamsPerConnection` calls share each
/// connection that carries calls, and only while no connection is opening. When
/// they are all full, one call opens a connection, or reuses an idle one if
/// any is known (alone, as it may pick any connection); with none idle, up to
/// `maxConnectionsOpening` calls open new connections at once
/// (`CURLOPT_FRESH_CONNECT`, which never attaches to another), one per
/// `streamsPerConnection` calls waiting. A server that does not multiplex gets
/// one call per connection, at once, as over HTTP/1.1, until one of its
/// connections speaks HTTP/2 again.
///
/// A connection counts for room only while calls are on it: an idle one may
/// have been closed by the server without libcurl noticing yet, and the next
/// call finds it (or opens another) itself.
public struct MultiplexGate: Sendable {
    /// How an admitted call is counted until it ends.
    public enum Admission: Sendable, Equatable {
        /// It may open a connection or reuse an idle one: nothing else starts before its request begins.
        case opensConnection
        /// It must open a connection of its own (`CURLOPT_FRESH_CONNECT`); others like it may open theirs at once.
        case opensNewConnection
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
    public let maxConnectionsOpening: Int
    public private(set) var serverProtocol = ServerProtocol.unknown
    /// Admitted calls that open (or may open) a connection, whose request has not begun.
    private var connectionsOpening = 0
    /// One of them may reuse any connection: nothing else may start.
    private var openingMayReuse = false
    /// Calls whose request has begun, per connection (only connections with calls on them).
    private var callsByConnection: [String: Int] = [:]
    /// Multiplexed connections seen and not known to be closed.
    private var openConnections: Set<String> = []
    /// `sharesConnection` calls admitted whose request has not begun yet.
    private var callsNotYetPlaced = 0

    public init(streamsPerConnection: Int, maxConnectionsOpening: Int = 8) {
        self.streamsPerConnection = max(streamsPerConnection, 1)
        self.maxConnectionsOpening = max(maxConnectionsOpening, 1)
    }

    /// Whether a call may start now, and how it counts; nil: it waits until a
    /// request begins, a call ends or a connection closes. `freshConnection`:
    /// the call must open a connection of its own (its last call broke down).
    /// `callsWaiting`: calls to the origin waiting behind this one.
    public mutating func admit(freshConnection: Bool, callsWaiting: Int = 0) -> Admission? {
        if serverProtocol == .oneCallPerConnection { return .unrestricted }
        if openingMayReuse { return nil }
        if serverProtocol == .unknown {
            guard connectionsOpening == 0 else { return nil }
            return opening(mayReuse: true)
        }
        if connectionsOpening == 0 && !freshConnection && hasRoom {
            callsNotYetPlaced += 1
            return .sharesConnection
        }
        if !freshConnection && openConnections.count > callsByConnection.count {
            guard connectionsOpening == 0 else { return nil }
            return opening(mayReuse: true)
        }
        let wanted = min(maxConnectionsOpening, 1 + callsWaiting / streamsPerConnection)
        guard connectionsOpening < wanted else { return nil }
        return opening(mayReuse: false)
    }

    /// An admitted call's request began on `connection` (any key naming the
    /// connection), `multiplexed` when it speaks HTTP/2.
    public mutating func requestBegan(_ admission: Admission, on connection: String, multiplexed: Bool) {
        guard admission != .unrestricted else {
            // The server took HTTP/2 again (a new deployment): learn it anew from the next call.
            if multiplexed { serverProtocol = .unknown }
            return
        }
        notPending(admission)
        guard multiplexed else {
            serverProtocol = .oneCallPerConnection
            return
        }
        serverProtocol = .multiplexing
        callsByConnection[connection, default: 0] += 1
        openConnections.insert(connection)
    }

    /// An admitted call ended; `connection` is where its request began, nil if it never did.
    public mutating func ended(_ admission: Admission, on connection: String?) {
        guard let connection else { return notPending(admission) }
        guard let calls = callsByConnection[connection] else { return }
        callsByConnection[connection] = calls > 1 ? calls - 1 : nil
    }

    /// libcurl closed `connection`.
    public mutating func closed(_ connection: String) {
        openConnections.remove(connection)
    }

    /// The connections that carry calls, for the metrics and tests.
    public var busyConnections: Int { callsByConnection.count }

    private mutating func opening(mayReuse: Bool) -> Admission {
        connectionsOpening += 1
        openingMayReuse = mayReuse
        return mayReuse ? .opensConnection : .opensNewConnection
    }

    /// An admitted call's request began, or it ended before.
    private mutating func notPending(_ admission: Admission) {
        switch admission {
        case .opensConnection:
            connectionsOpening -= 1
            openingMayReuse = false
        case .opensNewConnection: connectionsOpening -= 1
        case .sharesConnection: callsNotYetPlaced -= 1
        case .unrestricted: break
        }
    }

    private var hasRoom: Bool {
        let placed = callsByConnection.values.reduce(0, +)
        return placed + callsNotYetPlaced < callsByConnection.count * streamsPerConnection
    }
}
