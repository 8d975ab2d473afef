/// What a staff account may do in the support console. Each role may do
/// everything the one before it may.
public enum StaffRole: String, CaseIterable, Comparable, Sendable {
    /// Reads players, searches, reports.
    case viewer
    /// Also acts for a player: delivers what Apple's lookup shows, redelivers an event,
    /// sends a refund request's answer now.
    case support
    /// Also sets the review version and the sandbox users, manages staff, and extends a subscription's
    /// renewal date at Apple.
    case admin

    public static func < (lhs: StaffRole, rhs: StaffRole) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    public func may(_ action: StaffAction) -> Bool { self >= action.requiredRole }
}

/// An action staff take through the console, each confirmed on a second page
/// and written to `staff_audit` under its raw value.
public enum StaffAction: String, CaseIterable, Sendable {
    case deliverLookup = "deliver_lookup"
    case redeliverEvent = "redeliver_event"
    case sendRefundAnswer = "send_refund_answer"
    case reviewVersion = "review_version"
    case sandboxUsers = "sandbox_users"
    case staffAdd = "staff_add"
    case staffDisable = "staff_disable"
    /// Named as `iapctl subscriptions extend` names its rows, so that both read the same in the audit.
    case extendSubscription = "subscription_extend"

    public var requiredRole: StaffRole {
        switch self {
        case .deliverLookup, .redeliverEvent, .sendRefundAnswer: return .support
        case .reviewVersion, .sandboxUsers, .staffAdd, .staffDisable, .extendSubscription: return .admin
        }
    }

    /// The confirmation page's question.
    public var question: String {
        switch self {
        case .deliverLookup: return "Deliver the purchases of this Apple order that this database lacks to the player?"
        case .redeliverEvent: return "Send this event to the game's webhook again (72 hours of retries)?"
        case .sendRefundAnswer: return "Send this refund request's answer to Apple now?"
        case .reviewVersion: return "Set the app version in App Review (empty: none)?"
        case .sandboxUsers: return "Replace the sandbox users (testers whose sandbox purchases are honoured)?"
        case .staffAdd: return "Create this staff account?"
        case .staffDisable: return "Disable this staff account (its sessions end)?"
        case .extendSubscription:
            return "Ask Apple to push this subscription's renewal date back by these days, at no charge to the player?"
                + " (Apple allows 1 to 90 days, and two extensions of a subscription in 365 days.)"
        }
    }
}

/// A staff login name: 1 to 64 ASCII letters, digits, `.`, `-`, `_`.
public enum StaffName {
    public static func isValid(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// Passwords of fewer characters are refused when an account is made or its password changed.
    public static let minimumPasswordLength = 12
}
