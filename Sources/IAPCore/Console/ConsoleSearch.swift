/// What staff search for: a player by user id, or the player behind an order,
/// a transaction, an original transaction, an Apple order id (the customer's
/// e-mail receipt, looked up at Apple), a Google order id (`GPA.…`, Google's
/// e-mail receipt) or a Google purchase token (found by its SHA-256).
public enum ConsoleSearch: String, CaseIterable, Sendable {
    case userID = "user"
    case orderID = "order"
    case transactionID = "transaction"
    case originalTransactionID = "original"
    case appleOrderID = "apple_order"
    case googleOrderID = "google_order"
    case purchaseToken = "purchase_token"

    public var label: String {
        switch self {
        case .userID: return "User id"
        case .orderID: return "Order id"
        case .transactionID: return "Transaction id"
        case .originalTransactionID: return "Original transaction id"
        case .appleOrderID: return "Apple order id (receipt e-mail)"
        case .googleOrderID: return "Google order id (GPA.…)"
        case .purchaseToken: return "Google purchase token"
        }
    }

    /// A purchase token is never put in an address (nor in the logs and history that keep addresses) nor
    /// shown back whole: it is searched for only by a posted form, and shown as `StoreLabels.tokenPrefix`.
    public var isSecret: Bool { self == .purchaseToken }

    /// Whether `text` can be one: what the columns hold (64 characters of user id, 36 of an order's UUID,
    /// 64 ASCII of a transaction id, Google's ids among them; Apple's order ids are short ASCII letters and
    /// digits; Google's are `GPA.` and digits in dash-separated groups, a renewal's with `..N` after).
    public func accepts(_ text: String) -> Bool {
        switch self {
        case .userID:
            return UserID.isValid(text)
        case .orderID:
            return text.utf8.count == 36 && text.utf8.allSatisfy { Self.isHexOrDash($0) }
        case .transactionID, .originalTransactionID:
            return (1...64).contains(text.utf8.count)
                && text.utf8.allSatisfy { Self.isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
        case .appleOrderID:
            return (1...32).contains(text.utf8.count) && text.utf8.allSatisfy { Self.isAlphanumeric($0) }
        case .googleOrderID:
            let digits = text.utf8.dropFirst(Self.googleOrderPrefix.utf8.count)
            return text.hasPrefix(Self.googleOrderPrefix) && (1...60).contains(digits.count)
                && digits.allSatisfy { Self.isDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
        case .purchaseToken:
            return GoogleVerifyRequest.isPurchaseToken(text)
        }
    }

    static let googleOrderPrefix = "GPA."

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isHexOrDash(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte) || byte == UInt8(ascii: "-")
    }
}
