/// When a refund request may be answered: after the game has had its chance to
/// answer the `refund_requested` webhook with its consumption (docs/events.md "Refund
/// requests"): once the event has left `pending`, or 60 s after the request was
/// written; at once without a webhook, or without an event.
public enum RefundRequestReadiness {
    /// The longest wait for the webhook.
    public static let webhookWaitMs: Int64 = 60_000
    /// While it waits, the event is looked at again this often.
    public static let recheckMs: Int64 = 1000

    public enum Step: Sendable, Equatable {
        /// Decide and send now.
        case ready
        /// Look again at this time (UTC ms).
        case wait(untilMs: Int64)
    }

    /// - Parameters:
    ///   - eventPending: the `refund_requested` event is still `pending`; nil without an event.
    public static func step(
        webhookConfigured: Bool, eventPending: Bool?, createdAtMs: Int64, nowMs: Int64
    ) -> Step {
        guard webhookConfigured, eventPending == true else { return .ready }
        let giveUpMs = createdAtMs + webhookWaitMs
        guard nowMs < giveUpMs else { return .ready }
        return .wait(untilMs: min(nowMs + recheckMs, giveUpMs))
    }
}
