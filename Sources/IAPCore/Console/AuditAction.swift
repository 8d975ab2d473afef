/// What a `staff_audit` row records (its `action` column holds `rawValue`):
/// an action confirmed in the console, the same change made by `iapctl staff`,
/// another change of an account, or a login.
public enum AuditAction: Equatable, Sendable {
    /// Confirmed in the console (adding and disabling an account: with `iapctl staff` too).
    case console(StaffAction)
    /// A new password (`iapctl staff passwd`).
    case passwordSet
    /// Failed logins of a name forgotten (`iapctl staff unlock`).
    case unlock
    /// A session opened.
    case login
    /// A password checked and refused (a name that is no account, or is disabled, included).
    case loginFailed
    /// A session closed by its staff member.
    case logout
    /// `iapctl subscriptions` (`show`, `sync`, `extend`, `extend-all`): a player's chains read, chains
    /// brought up to date from Apple, a renewal date extended (one chain, or a product's every subscriber).
    case subscriptions(SubscriptionAuditAction)

    public var rawValue: String {
        switch self {
        case .console(let action): return action.rawValue
        case .passwordSet: return "staff_passwd"
        case .unlock: return "staff_unlock"
        case .login: return "login"
        case .loginFailed: return "login_failed"
        case .logout: return "logout"
        case .subscriptions(let action): return action.rawValue
        }
    }
}

/// What `iapctl subscriptions` did, in `staff_audit.action`.
public enum SubscriptionAuditAction: String, Sendable {
    case show = "subscriptions_show"
    case sync = "subscriptions_sync"
    case extend = "subscription_extend"
    case extendAll = "subscription_extend_all"
}
