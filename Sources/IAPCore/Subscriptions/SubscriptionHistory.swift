/// Several changes of one chain applied at once (a receipt shows every period it has; a notification
/// brings a period and renewal info): each takes its place by its date, the stale ones change nothing,
/// and the row is written once, with at most one event for the game.
public enum SubscriptionHistory {
    /// What `changes` (of one chain, in any order) do to `stored` together: `.changed` with the final
    /// state, which notifies the game when its status, expiry or auto-renewal ends up differing from
    /// `stored` (or the chain is new); `.stale` when every change was; `.noChain` when none could start it.
    public static func outcome(of changes: [SubscriptionChange], from stored: SubscriptionState?) -> SubscriptionOutcome {
        var state = stored
        var sawStale = false
        var sawApplied = false
        // Stable: changes of one date keep the order they came in.
        for change in changes.enumerated().sorted(by: { ($0.element.date, $0.offset) < ($1.element.date, $1.offset) }) {
            switch change.element.outcome(from: state) {
            case .stale: sawStale = true
            case .noChain: break
            case .unchanged: sawApplied = true
            case .changed(let next, _):
                sawApplied = true
                state = next
            }
        }
        guard let state else { return sawStale ? .stale : .noChain }
        guard let stored else { return .changed(state, notifiesGame: true) }
        if state == stored { return sawApplied || !sawStale ? .unchanged : .stale }
        let gameSees = state.status != stored.status || state.expiresAt != stored.expiresAt
            || state.autoRenews != stored.autoRenews
        return .changed(state, notifiesGame: gameSees)
    }
}

extension SubscriptionChange {
    /// The chain it is about: its period's, else its renewal info's `originalTransactionId`.
    public var chainID: String? {
        period?.originalTransactionID ?? renewalInfo?.originalTransactionID
    }
}
