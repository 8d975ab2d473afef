/// What staff search for: a player by user id, or the player behind an order,
/// a transaction, an original transaction, or an Apple order id (the customer's
/// e-mail receipt, looked up at Apple).
public enum ConsoleSearch: String, CaseIterable, Sendable {
    case userID = "user"
    case orderID = "order"
    case transactionID = "transaction"
    case originalTransactionID = "original"
    case appleOrderID = "apple_order"

    public var label: String {
        switch self {
        case .userID: return "User id"
        case .orderID: return "Order id"
        case .transactionID: return "Transaction id"
        case .originalTransactionID: return "Original transaction id"
        case .appleOrderID: return "Apple order id (receipt e-mail)"
        }
    }

    /// Whether `text` can be one: what the columns hold (64 characters of user id, 36 of an order's UUID,
    /// 64 ASCII of a transaction id; Apple's order ids are short ASCII letters and digits).
    public func accepts(_ text: String) -> Bool {
        switch self {
        case .userID:
            return UserID.isValid(text)
        case .orderID:
            return text.utf8.count == 36 && text.utf8.allSatisfy { Self.isHexOrDash($0) }
        case .transactionID, .originalTransactionID:
            return (1...64).contains(text.utf8.count) && text.utf8.allSatisfy { Self.isAlphanumeric($0) }
        case .appleOrderID:
            return (1...32).contains(text.utf8.count) && text.utf8.allSatisfy { Self.isAlphanumeric($0) }
        }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isHexOrDash(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte) || byte == UInt8(ascii: "-")
    }
}
