/// When a console session ends: `idle` seconds after it was last used, and
/// `absolute` seconds after its login whatever happened since.
public struct SessionLifetime: Equatable, Sendable {
    public let idleSeconds: Int
    public let absoluteSeconds: Int

    public init(idleSeconds: Int, absoluteSeconds: Int) {
        self.idleSeconds = idleSeconds
        self.absoluteSeconds = absoluteSeconds
    }

    /// Whether a session is still valid `ageMs` after its login and `idleMs` after it was last used.
    /// Negative ages (dates in the future: a clock moved) are not valid.
    public func isValid(ageMs: Int64, idleMs: Int64) -> Bool {
        guard ageMs >= 0, idleMs >= 0 else { return false }
        return idleMs < Int64(idleSeconds) * 1000 && ageMs < Int64(absoluteSeconds) * 1000
    }
}

/// How many failed logins lock logins out, per name and per address, within `windowSeconds`.
public struct LoginThrottle: Equatable, Sendable {
    public static let standard = LoginThrottle(perName: 5, perAddress: 20, windowSeconds: 900)

    public let perName: Int
    public let perAddress: Int
    public let windowSeconds: Int

    /// Whether a login may be tried, given the failures of the window for its name and its address.
    /// A locked-out login is refused before its password is checked, right or wrong.
    public func allows(failuresForName: Int, failuresFromAddress: Int) -> Bool {
        failuresForName < perName && failuresFromAddress < perAddress
    }
}
