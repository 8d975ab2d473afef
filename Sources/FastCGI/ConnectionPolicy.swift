/// Whom the listener serves and how many idle connections it keeps.
public struct ConnectionPolicy: Sendable {
    /// The IP addresses (4 or 16 bytes, an IPv4-mapped IPv6 address as its 4) TCP
    /// clients may connect from; a connection from another is closed unread.
    /// Empty: any. Unix socket clients are not checked (the file's mode is).
    public var allowedPeers: Set<[UInt8]>
    /// The most kept connections left idle at once; past it the oldest is closed
    /// (nginx drops it from its pool and opens another when it needs one).
    public var idleLimit: Int
    /// Where the listener reports what an operator must know (accept failing, clients refused).
    public var log: @Sendable (String) -> Void

    public init(allowedPeers: Set<[UInt8]>, idleLimit: Int, log: @escaping @Sendable (String) -> Void) {
        self.allowedPeers = allowedPeers
        self.idleLimit = idleLimit
        self.log = log
    }
}
