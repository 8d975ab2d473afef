/// What a `staff_audit` row records: an action confirmed in the console
/// (`StaffAction`), a change `iapctl staff` made, or a login.
public enum AuditAction: String, CaseIterable, Sendable {
    case deliverLookup = "deliver_lookup"
    case redeliverEvent = "redeliver_event"
    case sendRefundAnswer = "send_refund_answer"
    case reviewVersion = "review_version"
    case sandboxUsers = "sandbox_users"
    case staffAdd = "staff_add"
    case staffDisable = "staff_disable"
    /// A new password (`iapctl staff passwd`).
    case staffPasswd = "staff_passwd"
    /// Failed logins of a name forgotten (`iapctl staff unlock`).
    case staffUnlock = "staff_unlock"
    /// A session opened.
    case login
    /// A password checked and refused (a name that is no account, or is disabled, included).
    case loginFailed = "login_failed"
    /// A session closed by its staff member.
    case logout

    /// The row of a console action: the same name.
    public init(_ action: StaffAction) {
        self.init(rawValue: action.rawValue)!
    }
}
