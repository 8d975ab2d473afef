/// What a finished webhook POST tells about a refund request: only a 2xx
/// answer to a `refund_requested` event carries the game's consumption
/// (`RefundRequestGameAnswer`). When such an answer says nothing usable, the
/// consumption is left to the `consumption` table and the reason is logged,
/// so that a game that meant to answer can see why it was not heard.
public struct RefundRequestReply: Equatable, Sendable {
    /// How much of the purchase the game used, in milliunits; nil when it did not say.
    public let consumedMilli: Int?
    /// Why a 2xx answer to a refund request gave no consumption, for the log
    /// (it quotes nothing the game sent); nil when there is nothing to say.
    public let unheard: String?

    /// The reply of a POST of an event of `type`, answered 2xx when
    /// `delivered`, with `body`.
    public init(eventType: GameEventType, delivered: Bool, body: [UInt8]) {
        guard delivered && eventType == .refundRequested else {
            self.init(consumedMilli: nil, unheard: nil)
            return
        }
        switch RefundRequestGameAnswer(body: body) {
        case .consumed(let milli):
            self.init(consumedMilli: milli, unheard: nil)
        case .silent:
            self.init(consumedMilli: nil, unheard: "the game answered no consumption_percentage")
        case .invalid(let reason):
            self.init(consumedMilli: nil, unheard: "the game's answer is ignored: \(reason)")
        }
    }

    private init(consumedMilli: Int?, unheard: String?) {
        self.consumedMilli = consumedMilli
        self.unheard = unheard
    }
}
