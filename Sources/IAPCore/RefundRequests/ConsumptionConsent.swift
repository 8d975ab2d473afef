/// A user's consent to share consumption data (`consumption_consent`).
public struct ConsumptionConsent: Sendable, Equatable {
    /// UTC ms when the user last agreed.
    public let consentedAtMs: Int64
    /// UTC ms when the user withdrew it; nil: never.
    public let withdrawnAtMs: Int64?

    public init(consentedAtMs: Int64, withdrawnAtMs: Int64?) {
        self.consentedAtMs = consentedAtMs
        self.withdrawnAtMs = withdrawnAtMs
    }

    /// In force when never withdrawn, or withdrawn before it was given again.
    public var isInForce: Bool {
        guard let withdrawnAtMs else { return true }
        return withdrawnAtMs < consentedAtMs
    }
}
