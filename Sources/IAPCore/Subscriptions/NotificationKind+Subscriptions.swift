extension NotificationKind {
    /// What a notification does to the transaction it carries, subscriptions included. A subscription
    /// notification (`SUBSCRIBED`, `DID_RENEW`, `EXPIRED`, ...) carries the chain's latest period: a
    /// period paid for, delivered once as a `ONE_TIME_CHARGE` is when this database has never seen it
    /// (a renewal while the app was closed), and left as it is when it has. `REFUND`, `REVOKE` and
    /// `REFUND_REVERSED` keep their own kind.
    public init(notificationType: String, subtype: String?) {
        let own = NotificationKind(notificationType: notificationType)
        guard own == .informational, SubscriptionChangeKind(notificationType: notificationType, subtype: subtype) != nil
        else {
            self = own
            return
        }
        self = .charge
    }

    /// A charge that only a subscription's notification implies: the transaction is not changed when
    /// this database has it already, and the notification takes no place in the transaction's own
    /// history of refunds (its `signedDate` would make an older `REFUND` of that period look stale).
    public static func isPeriodCarrier(notificationType: String, subtype: String?) -> Bool {
        NotificationKind(notificationType: notificationType) == .informational
            && NotificationKind(notificationType: notificationType, subtype: subtype) == .charge
    }
}
