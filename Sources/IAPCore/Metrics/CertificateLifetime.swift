/// When a certificate stops being valid, as `iap_certificate_expiry_days` and
/// `iapctl status` show it.
public struct CertificateLifetime: Equatable, Sendable {
    /// The certificate's subject, e.g. `CN=Apple Root CA - G3,OU=...`.
    public let subject: String
    /// Its `notValidAfter`, in ms since 1970.
    public let notValidAfterMs: Int64

    public init(subject: String, notValidAfterMs: Int64) {
        self.subject = subject
        self.notValidAfterMs = notValidAfterMs
    }

    /// Days from `nowMs` until it expires; negative once it has.
    public func daysLeft(nowMs: Int64) -> Double {
        Double(notValidAfterMs - nowMs) / 86_400_000
    }
}
