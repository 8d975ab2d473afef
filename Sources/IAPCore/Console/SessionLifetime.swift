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
