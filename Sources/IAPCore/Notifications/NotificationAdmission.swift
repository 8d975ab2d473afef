/// Whether a purchase a notification carries may be delivered with no client's
/// verify. A notification has no `app_version`, so the review switch cannot
/// admit a sandbox purchase: only the policy `always` or a user in
/// `sandbox_users` does (docs/api.md "POST /v1/notifications/apple"). What is
/// not admitted is held `unclaimed`, and the client's verify decides under the
/// usual rules.
public enum NotificationAdmission {
    /// - Parameters:
    ///   - environment: the signed transaction's `environment`.
    ///   - userID: the user of the order its `appAccountToken` names; nil without one.
    ///   - settingsAreKnown: false while `settings` was never read: no sandbox user is known.
    public static func mayDeliver(
        environment: String, policy: SandboxPolicy, settingsAreKnown: Bool, sandboxUsers: [String], userID: String?
    ) -> Bool {
        switch environment {
        case "Production":
            return true
        case "Sandbox":
            if policy == .always { return true }
            guard policy == .review, settingsAreKnown, let userID else { return false }
            return sandboxUsers.contains(userID)
        default:
            // Xcode and LocalTesting: no payment at all.
            return policy == .always
        }
    }
}
