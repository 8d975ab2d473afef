/// What a verify does with a purchase Google described (productsv2), before
/// anything is written: the package and product checks, the purchase state,
/// and the sandbox policy for test purchases. The client's own word about the
/// purchase is never used; only what it asked for is compared with Google's.
public enum GooglePurchaseDecision {
    public enum Verdict: Equatable, Sendable {
        /// Paid and for us: record and deliver it.
        case deliverable(Deliverable)
        /// `PENDING`: not paid yet (202 `pending`); nothing is delivered.
        case pending
        /// `CANCELLED` (a pending purchase never paid): `not_paid`.
        case notPaid
        /// Not for us (package, product, or a test purchase against the policy): `rejected`.
        case rejected(reason: String)
        /// A test purchase under the `review` policy while the settings are not
        /// read yet: `retry_later`, as for an Apple sandbox purchase.
        case settingsUnknown
    }

    public struct Deliverable: Equatable, Sendable {
        /// `transactions.transaction_id` (`GoogleTransactionID`).
        public let transactionID: String
        /// The line items' quantity, all of the request's product.
        public let quantity: Int
        /// `Sandbox` for a test purchase, else `Production`.
        public let environment: AppleEnvironment

        public init(transactionID: String, quantity: Int, environment: AppleEnvironment) {
            self.transactionID = transactionID
            self.quantity = quantity
            self.environment = environment
        }
    }

    /// The sandbox policy's inputs, as `Admission.admit` takes them.
    public struct SandboxRules: Sendable {
        public let policy: SandboxPolicy
        public let settingsAreKnown: Bool
        public let reviewVersion: String
        public let sandboxUsers: [String]

        public init(policy: SandboxPolicy, settingsAreKnown: Bool, reviewVersion: String, sandboxUsers: [String]) {
            self.policy = policy
            self.settingsAreKnown = settingsAreKnown
            self.reviewVersion = reviewVersion
            self.sandboxUsers = sandboxUsers
        }
    }

    /// - Parameters:
    ///   - packages: `IAP_GOOGLE_PACKAGES`; the request's package must be one exactly.
    ///   - userID: the user the goods would go to (the order's, else the request's),
    ///     for the `sandbox_users` setting.
    public static func decide(
        purchase: GooglePurchase, request: GoogleVerifyRequest, packages: [String], sandbox: SandboxRules,
        userID: String
    ) -> Verdict {
        guard packages.contains(request.packageName) else {
            return .rejected(reason: "package \(request.packageName) is not configured")
        }
        if let other = purchase.lineItems.first(where: { $0.productID != request.productID }) {
            return .rejected(reason: "the purchase is of product \(other.productID.prefix(64)), not the one asked for")
        }
        switch purchase.state {
        case .pending: return .pending
        case .cancelled: return .notPaid
        case .purchased: break
        }
        let environment: AppleEnvironment = purchase.isTestPurchase ? .sandbox : .production
        // The package stands as the bundle id: Admission checks it against the same list.
        let admission = Admission.admit(
            receipt: AppleReceipt(
                format: .appReceipt, bundleID: request.packageName, applicationVersion: nil, appItemID: nil, inApp: []),
            environment: environment, bundleIDs: packages, policy: sandbox.policy,
            settingsAreKnown: sandbox.settingsAreKnown, reviewVersion: sandbox.reviewVersion,
            sandboxUsers: sandbox.sandboxUsers, appVersion: request.appVersion, userID: userID)
        switch admission {
        case .rejected(let reason): return .rejected(reason: "a test purchase, taken as sandbox: \(reason)")
        case .settingsUnknown: return .settingsUnknown
        case .admitted: break
        }
        let quantity = purchase.lineItems.reduce(0) { $0 + $1.quantity }
        return .deliverable(
            Deliverable(
                transactionID: GoogleTransactionID.of(orderID: purchase.orderID, purchaseToken: request.purchaseToken),
                quantity: quantity, environment: environment))
    }
}
