/// Apple's text values the ledger keeps in its ASCII columns (`reason`,
/// `product_type`, `VARCHAR(32) CHARACTER SET ascii`). Apple's values are
/// short enum names; one that would not fit (non-ASCII, control characters,
/// too long) is not stored rather than making the notification fail forever.
public enum RefundRequestText {
    public static let maxLength = 32

    /// `value` when it fits the column, else nil.
    public static func column(_ value: String?) -> String? {
        guard let value, (1...maxLength).contains(value.utf8.count),
            value.utf8.allSatisfy({ (0x20...0x7E).contains($0) })
        else { return nil }
        return value
    }
}
