/// `products.type`: what a catalog product is, which says what a store is owed once it is delivered.
public enum ProductType: String, CaseIterable, Sendable {
    /// Bought again and again (gems): a Google purchase is consumed, which also acknowledges it.
    case consumable
    /// Bought once and kept (a level unlocked): a Google purchase is acknowledged, never consumed.
    case nonConsumable = "non_consumable"
    /// Renewed by the store: a Google purchase is acknowledged.
    case subscription

    /// The type a stored value names; a product the catalog no longer holds counts as consumable, the default.
    public init(stored: String?) {
        self = stored.flatMap(ProductType.init(rawValue:)) ?? .consumable
    }

    /// Whether Google is to consume the purchase (else only acknowledge it).
    public var isConsumedAtGoogle: Bool { self == .consumable }
}
