/// How the console names a store and shows what it must not show whole.
public enum StoreLabels {
    /// `transactions.store` (and the other tables' `store`) as staff read it.
    public static func name(_ store: String) -> String {
        switch store {
        case "app_store": return "App Store"
        case "google_play": return "Google Play"
        default: return store
        }
    }

    /// How many characters of a purchase token the console shows: enough to tell two purchases apart
    /// when a player reads theirs out, far too few to use it.
    public static let tokenPrefixLength = 8

    /// The first characters of a purchase token and an ellipsis (empty for none): never the whole token.
    public static func tokenPrefix(_ token: String?) -> String {
        guard let token, !token.isEmpty else { return "" }
        return String(token.prefix(tokenPrefixLength)) + "…"
    }

    /// A purchase's quantity as staff read it: `3`, or `3 (1 refunded)` after a quantity-based partial refund.
    public static func quantity(_ quantity: String, refunded: String) -> String {
        guard let refundedCount = Int(refunded), refundedCount > 0 else { return quantity }
        return "\(quantity) (\(refundedCount) refunded)"
    }
}
