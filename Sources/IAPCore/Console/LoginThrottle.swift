/// What failed console logins of the last `windowSeconds` allow now.
///
/// Wrong passwords lock one name from one address only (`perNameAndAddress`):
/// a stranger who types a colleague's name five times locks nobody else out,
/// and staff behind one NAT or VPN address keep their own logins. Across
/// addresses, a name's failures (and an address's across names) only slow
/// logins down: past `failuresBeforeSlowing`, each attempt waits a delay after
/// the last failure that doubles with each further failure, up to
/// `longestDelaySeconds`. A guesser gets a few dozen tries a window; the owner
/// of the name waits at most a minute.
public struct LoginThrottle: Equatable, Sendable {
    public static let standard = LoginThrottle(
        perNameAndAddress: 5, nameFailuresBeforeSlowing: 5, addressFailuresBeforeSlowing: 20, firstDelaySeconds: 1,
        longestDelaySeconds: 60, windowSeconds: 900)

    public let perNameAndAddress: Int
    public let nameFailuresBeforeSlowing: Int
    public let addressFailuresBeforeSlowing: Int
    public let firstDelaySeconds: Int
    public let longestDelaySeconds: Int
    public let windowSeconds: Int

    public init(
        perNameAndAddress: Int, nameFailuresBeforeSlowing: Int, addressFailuresBeforeSlowing: Int,
        firstDelaySeconds: Int, longestDelaySeconds: Int, windowSeconds: Int
    ) {
        self.perNameAndAddress = perNameAndAddress
        self.nameFailuresBeforeSlowing = nameFailuresBeforeSlowing
        self.addressFailuresBeforeSlowing = addressFailuresBeforeSlowing
        self.firstDelaySeconds = firstDelaySeconds
        self.longestDelaySeconds = longestDelaySeconds
        self.windowSeconds = windowSeconds
    }

    /// Failures of the window that bear on one attempt.
    public struct Failures: Equatable, Sendable {
        /// Of this name from this address.
        public var ofNameFromAddress: Int
        /// Of this name, from any address, and milliseconds since the newest one.
        public var ofName: Int
        public var msSinceNameFailure: Int64?
        /// From this address, for any name, and milliseconds since the newest one.
        public var fromAddress: Int
        public var msSinceAddressFailure: Int64?

        public init(
            ofNameFromAddress: Int, ofName: Int, msSinceNameFailure: Int64?, fromAddress: Int,
            msSinceAddressFailure: Int64?
        ) {
            self.ofNameFromAddress = ofNameFromAddress
            self.ofName = ofName
            self.msSinceNameFailure = msSinceNameFailure
            self.fromAddress = fromAddress
            self.msSinceAddressFailure = msSinceAddressFailure
        }
    }

    public enum Decision: Equatable, Sendable {
        /// The password is checked.
        case allowed
        /// This name from this address: refused until the window passes or `iapctl staff unlock`.
        case locked
        /// Refused for now: try again in this many seconds (at least 1).
        case wait(seconds: Int)
    }

    /// A refused attempt is refused before its password is checked, right or wrong.
    public func decide(_ failures: Failures) -> Decision {
        if failures.ofNameFromAddress >= perNameAndAddress { return .locked }
        let waitMs = max(
            remainingMs(failures.ofName, since: failures.msSinceNameFailure, freeFailures: nameFailuresBeforeSlowing),
            remainingMs(failures.fromAddress, since: failures.msSinceAddressFailure, freeFailures: addressFailuresBeforeSlowing))
        return waitMs > 0 ? .wait(seconds: Int((waitMs + 999) / 1000)) : .allowed
    }

    /// The delay after the newest of `count` failures: none up to `freeFailures`, then `firstDelaySeconds`,
    /// doubling with each failure beyond, at most `longestDelaySeconds`.
    public func delaySeconds(afterFailures count: Int, freeFailures: Int) -> Int {
        guard count >= freeFailures else { return 0 }
        let doublings = min(count - freeFailures, 30)
        return min(firstDelaySeconds << doublings, longestDelaySeconds)
    }

    private func remainingMs(_ count: Int, since msSince: Int64?, freeFailures: Int) -> Int64 {
        let delayMs = Int64(delaySeconds(afterFailures: count, freeFailures: freeFailures)) * 1000
        guard delayMs > 0, let msSince else { return 0 }
        return max(delayMs - max(msSince, 0), 0)
    }
}
