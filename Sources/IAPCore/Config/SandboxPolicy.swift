/// Which sandbox receipts are honoured (`IAP_SANDBOX_POLICY`). Sandbox purchases
/// cost nothing, so honouring every one lets anyone with a tester account take
/// goods for free in production.
public enum SandboxPolicy: String, Sendable, CaseIterable {
    /// Only while a review version is set and the request's `app_version` equals
    /// it, or for users listed in the `sandbox_users` setting. The default.
    case review
    /// Every sandbox receipt (staging servers).
    case always
    /// No sandbox receipt.
    case never
}
