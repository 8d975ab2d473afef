/// The store that sold a purchase (`transactions.store`, `events.store`).
public enum PurchaseStore: String, Equatable, Sendable {
    case appStore = "app_store"
    case googlePlay = "google_play"
}
