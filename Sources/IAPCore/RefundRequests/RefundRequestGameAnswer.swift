/// What the game answered to a `refund_requested` webhook POST (docs/events.md
/// "Refund requests"): a 2xx whose JSON body `{"consumption_percentage": N}`
/// (an integer, 0 to 100000) says how much of the purchase was used. Any
/// other body leaves the consumption to the `consumption` table.
public enum RefundRequestGameAnswer: Equatable, Sendable {
    /// The game said how much was consumed, in milliunits.
    case consumed(Int)
    /// An empty body, or a JSON object without `consumption_percentage`.
    case silent
    /// A body that is not such an answer; the reason is safe to log (it quotes nothing the game sent).
    case invalid(String)

    public init(body: [UInt8]) {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            self = .silent
            return
        }
        guard let object = (try? JSONParser.parse(body))?.objectValue else {
            self = .invalid("the body is not a JSON object")
            return
        }
        guard let value = object["consumption_percentage"] else {
            self = .silent
            return
        }
        guard case .number(let text) = value, let milli = ConsumedMilli.parse(text) else {
            self = .invalid("consumption_percentage is not an integer from 0 to 100000")
            return
        }
        self = .consumed(milli)
    }
}
