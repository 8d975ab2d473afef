/// How much of a purchase was used, in Apple's milliunits: 0 (nothing) to
/// 100000 (all of it), as `consumption.consumed_milli`,
/// `consumption_requests.game_consumed_milli` and Apple's
/// `consumptionPercentage` hold it.
public enum ConsumedMilli {
    public static let range = 0...100_000

    /// The value of a decimal integer text in `range` (`iapctl consumption set`); nil otherwise.
    public static func parse(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), text.utf8.count <= 6,
            let value = Int(text), range.contains(value)
        else { return nil }
        return value
    }
}
