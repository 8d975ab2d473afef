/// The time windows voided purchases are read in. Google lists at most 30
/// days back (`startTime` older is refused).
public enum GoogleVoidedWindow {
    public static let maximumDaysBack: Int64 = 30
    static let dayMs: Int64 = 86_400_000
    /// Kept off Google's limit, so that a request made at its edge is not refused for the time it took to send.
    static let marginMs: Int64 = 60_000

    /// The earliest `startTime` Google takes at `nowMs`.
    public static func earliest(nowMs: Int64) -> Int64 {
        nowMs - maximumDaysBack * dayMs + marginMs
    }

    /// `iapctl google voided-sync`'s start: `--since` when given (nil: the earliest
    /// Google lists), or why it cannot be used.
    public static func syncStart(since: Int64?, nowMs: Int64) -> Result<Int64, SyncWindowProblem> {
        guard let since else { return .success(earliest(nowMs: nowMs)) }
        guard since < nowMs else { return .failure(.notInThePast) }
        guard since >= nowMs - maximumDaysBack * dayMs else { return .failure(.tooFarBack) }
        return .success(max(since, earliest(nowMs: nowMs)))
    }

    public enum SyncWindowProblem: Error, Equatable, CustomStringConvertible {
        case notInThePast
        case tooFarBack

        public var description: String {
            switch self {
            case .notInThePast: return "--since is not in the past"
            case .tooFarBack: return "--since is more than \(maximumDaysBack) days back: Google lists no older voided purchases"
            }
        }
    }

    /// The start of the read a partial-refund notification makes to find its
    /// quantity: a day before the notification's time (Google voids before it
    /// notifies), never earlier than Google takes.
    public static func notificationStart(eventTimeMs: Int64, nowMs: Int64) -> Int64 {
        max(eventTimeMs - dayMs, earliest(nowMs: nowMs))
    }
}
