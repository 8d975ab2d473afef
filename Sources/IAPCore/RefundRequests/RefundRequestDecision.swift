/// What to answer a store's refund request with, decided from what this
/// service knows: delivery, consumption, the product's policy and the user's
/// consent. Pure and store-neutral; `AppStoreConsumptionRequest` writes Apple's
/// body from it (Google Play's reviewrefund will read the same answer).
public enum RefundRequestDecision: Sendable, Equatable {
    /// The user's consent is not in force: nothing may be sent.
    case noConsent
    /// Send this answer.
    case send(RefundRequestAnswer)

    /// The highest consumption, in milliunits: all of the purchase used.
    public static let fullConsumptionMilli = 100_000

    /// What is known about a refund request when its answer is decided.
    public struct Facts: Sendable, Equatable {
        /// The purchase was delivered to a user here.
        public var delivered: Bool
        /// What the game answered to the `refund_requested` webhook; wins over `recordedConsumedMilli`.
        public var answeredConsumedMilli: Int?
        /// The game's row in `consumption`.
        public var recordedConsumedMilli: Int?
        public var policy: RefundPolicy
        /// The consent of the user the purchase belongs to; nil: none recorded (or no user known).
        public var consent: ConsumptionConsent?
        /// An auto-renewable subscription: the store computes its consumption itself.
        public var isAutoRenewableSubscription: Bool
        /// A free sample or trial of the content was offered before the purchase.
        public var sampleContentProvided: Bool

        public init(
            delivered: Bool, answeredConsumedMilli: Int? = nil, recordedConsumedMilli: Int? = nil,
            policy: RefundPolicy = .none, consent: ConsumptionConsent?, isAutoRenewableSubscription: Bool = false,
            sampleContentProvided: Bool = false
        ) {
            self.delivered = delivered
            self.answeredConsumedMilli = answeredConsumedMilli
            self.recordedConsumedMilli = recordedConsumedMilli
            self.policy = policy
            self.consent = consent
            self.isAutoRenewableSubscription = isAutoRenewableSubscription
            self.sampleContentProvided = sampleContentProvided
        }
    }

    /// The decision for `facts` (docs/events.md "Refund requests").
    ///
    /// The consumption sent is the game's webhook answer, else its `consumption` row,
    /// clamped to 0...100000; none for an auto-renewable subscription; 0 for a purchase
    /// never delivered here (nothing delivered, nothing used: the App Store refuses any
    /// other value with an undelivered status).
    public static func decide(_ facts: Facts) -> RefundRequestDecision {
        guard let consent = facts.consent, consent.isInForce else { return .noConsent }
        let consumed: Int?
        if facts.isAutoRenewableSubscription {
            consumed = nil
        } else if !facts.delivered {
            consumed = 0
        } else {
            consumed = (facts.answeredConsumedMilli ?? facts.recordedConsumedMilli)
                .map { min(max($0, 0), fullConsumptionMilli) }
        }
        return .send(
            RefundRequestAnswer(
                delivered: facts.delivered, consumedMilli: consumed,
                preference: preference(facts.policy, delivered: facts.delivered, consumedMilli: consumed),
                sampleContentProvided: facts.sampleContentProvided))
    }

    /// The preference `policy` asks for, given delivery and the consumption that is sent.
    static func preference(_ policy: RefundPolicy, delivered: Bool, consumedMilli: Int?) -> RefundPreference? {
        switch policy {
        case .none:
            return nil
        case .decline:
            return .decline
        case .grantFull:
            return .grantFull
        case .grantProrated:
            guard let consumedMilli, consumedMilli > 0 else { return nil }
            return .grantProrated
        case .auto:
            guard delivered else { return .grantFull }
            guard let consumedMilli else { return nil }
            if consumedMilli == 0 { return .grantFull }
            if consumedMilli >= fullConsumptionMilli { return .decline }
            return .grantProrated
        }
    }
}

/// The answer to a refund request, store-neutral.
public struct RefundRequestAnswer: Sendable, Equatable {
    public let delivered: Bool
    /// Milliunits used, 0...100000; nil: unknown (left out).
    public let consumedMilli: Int?
    /// nil: no preference.
    public let preference: RefundPreference?
    public let sampleContentProvided: Bool

    public init(delivered: Bool, consumedMilli: Int?, preference: RefundPreference?, sampleContentProvided: Bool) {
        self.delivered = delivered
        self.consumedMilli = consumedMilli
        self.preference = preference
        self.sampleContentProvided = sampleContentProvided
    }
}
