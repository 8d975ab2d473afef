/// What a product's refund requests ask the store for (`products.refund_preference`).
/// Store-neutral: the App Store's refundPreference and Google Play's
/// reviewrefund preference are both read from it.
public enum RefundPolicy: String, Sendable, CaseIterable {
    /// No preference is sent (the default): the store decides from the rest.
    case none
    /// Always ask the store to decline.
    case decline
    /// Always ask for a full refund.
    case grantFull = "grant_full"
    /// Ask for a refund of the unused share; only with a consumption above 0, else no preference.
    case grantProrated = "grant_prorated"
    /// By delivery and consumption: full refund when never delivered; for a delivered
    /// purchase, full at 0, decline when all of it was used, prorated in between, and no
    /// preference when the consumption is unknown.
    case auto
}

/// The outcome a refund request asks the store for, when it asks for one.
public enum RefundPreference: Sendable, Equatable {
    case decline
    case grantFull
    case grantProrated
}
