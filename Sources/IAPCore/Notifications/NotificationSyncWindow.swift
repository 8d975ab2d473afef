/// The window of `iapctl notifications sync --since DATE` (docs/iapctl.md): from DATE
/// to now, at most `maximumDaysBack` days back (Get Notification History keeps
/// no more).
public enum NotificationSyncWindow {
    public static let maximumDaysBack: Int64 = 180

    /// `YYYY-MM-DD` (midnight) or ISO 8601 `YYYY-MM-DDTHH:MM:SSZ` (or `+00:00`),
    /// UTC, in milliseconds since 1970; nil for anything else.
    public static func milliseconds(since text: String) -> Int64? {
        if text.utf8.count == 10 {
            return AppleDate.milliseconds(fromAppleDate: text + " 00:00:00")
        }
        return AppleDate.milliseconds(fromRFC3339: text)
    }

    /// Why Apple would refuse a window starting at `since`; nil when it is fine.
    public static func problem(since: Int64, nowMs: Int64) -> String? {
        guard since < nowMs else { return "--since is not in the past" }
        guard nowMs - since <= maximumDaysBack * 86_400_000 else {
            return "--since is more than \(maximumDaysBack) days back: Apple keeps no older notifications"
        }
        return nil
    }
}
