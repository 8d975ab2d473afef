/// A notification type by its effect on the transaction it carries (docs/api.md
/// "POST /v1/notifications/apple", the table of effects).
public enum NotificationKind: Equatable, Sendable {
    /// `ONE_TIME_CHARGE`: a purchase, delivered as by a verify.
    case charge
    /// `REFUND`, `REVOKE`: the transaction becomes refunded.
    case refund
    /// `REFUND_REVERSED`: a refund is undone.
    case refundReversed
    /// `REFUND_DECLINED`, `CONSUMPTION_REQUEST`, `TEST` and any other: stored, nothing changes.
    case informational

    public init(notificationType: String) {
        switch notificationType {
        case "ONE_TIME_CHARGE": self = .charge
        case "REFUND", "REVOKE": self = .refund
        case "REFUND_REVERSED": self = .refundReversed
        default: self = .informational
        }
    }
}
