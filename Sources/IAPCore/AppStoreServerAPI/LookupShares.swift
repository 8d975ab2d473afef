/// One user's and one client address's share of the minute's look-up budget
/// (`TransactionLookupBudget`): at most `perUser` look-ups in any minute for
/// one user and `perAddress` for one address, so that one player, or one
/// client posting for many made-up users, cannot spend what every other
/// player needs. A request past its share is not looked up (`retry_later`,
/// the client asks again a little later: nothing is lost), while the look-ups
/// of others still go through.
///
/// An IPv6 address counts by its /64, the block one subscriber is given, so
/// that stepping through the addresses of one's own block gains nothing. An
/// address has a large share of the whole (many players may sit behind one
/// NAT), a user a small one (a player rarely has more than a purchase or two to
/// look up in a minute).
///
/// Bounded: only look-ups the budget took are recorded, so a minute holds no
/// more of them than the budget allows; each is forgotten a minute after it
/// was taken. Times are milliseconds on the caller's monotonic clock, never
/// going back.
public struct LookupShares: Sendable {
    /// Who asks for a look-up.
    public struct Requester: Hashable, Sendable {
        /// The request's user (`user_id`, or its `order_id` when it names no user).
        public let user: String
        /// The client's network: an IPv4 address, an IPv6 /64; nil when not known (a local socket).
        public let network: String?

        public init(user: String, address: String?) {
            self.user = user
            self.network = address.map(Self.network)
        }

        /// `203.0.113.7` as is; `2001:db8:1:2:3:4:5:6` as `2001:db8:1:2::/64`; text that is no
        /// address as it came.
        static func network(_ address: String) -> String {
            guard let parsed = IPAddress(address) else { return address }
            guard parsed.bytes.count == 16 else { return parsed.description }
            let groups = stride(from: 0, to: 8, by: 2).map {
                String(UInt16(parsed.bytes[$0]) << 8 | UInt16(parsed.bytes[$0 + 1]), radix: 16)
            }
            return groups.joined(separator: ":") + "::/64"
        }
    }

    public let perUser: Int
    public let perAddress: Int
    private var byUser: [String: Int] = [:]
    private var byNetwork: [String: Int] = [:]
    /// The look-ups recorded, in the order taken.
    private var taken = OldestFirstQueue<(requester: Requester, atMs: Int64)>()

    /// The shares of a budget of `perMinute`: a tenth for a user, half for an address (at least one each).
    public init(perMinute: Int) {
        self.init(perUser: max(1, perMinute / 10), perAddress: max(1, perMinute / 2))
    }

    public init(perUser: Int, perAddress: Int) {
        precondition(perUser > 0 && perAddress > 0, "a share of at least one look-up")
        self.perUser = perUser
        self.perAddress = perAddress
    }

    /// Whether `requester` has some of its shares left at `now`.
    public mutating func allows(_ requester: Requester, atMs now: Int64) -> Bool {
        forgetExpired(atMs: now)
        guard byUser[requester.user, default: 0] < perUser else { return false }
        guard let network = requester.network else { return true }
        return byNetwork[network, default: 0] < perAddress
    }

    /// `requester` took a look-up of the budget at `now`.
    public mutating func record(_ requester: Requester, atMs now: Int64) {
        forgetExpired(atMs: now)
        byUser[requester.user, default: 0] += 1
        if let network = requester.network { byNetwork[network, default: 0] += 1 }
        taken.append((requester, now))
    }

    /// The users and networks with a look-up in the last minute.
    public var remembered: (users: Int, networks: Int) { (byUser.count, byNetwork.count) }

    private mutating func forgetExpired(atMs now: Int64) {
        while let oldest = taken.first, now - oldest.atMs >= TransactionLookupBudget.windowMs {
            let requester = taken.removeFirst().requester
            Self.decrement(&byUser, requester.user)
            if let network = requester.network { Self.decrement(&byNetwork, network) }
        }
    }

    private static func decrement(_ counts: inout [String: Int], _ key: String) {
        let left = counts[key, default: 1] - 1
        counts[key] = left > 0 ? left : nil
    }
}
