/// docs/api.md "POST /v1/receipts/verify" steps 3 and 4: the bundle check and
/// the sandbox policy, applied to a receipt Apple has found valid.
public enum Admission {
    /// - Parameters:
    ///   - environment: where Apple found the receipt valid (not the receipt's
    ///     own claim).
    ///   - bundleIDs: the configured bundle ids; the receipt's must equal one exactly.
    ///   - settingsAreKnown: false while the service has not read `settings`
    ///     yet (the database was down at start-up): `reviewVersion` and
    ///     `sandboxUsers` are then unknown, not empty.
    ///   - reviewVersion: the app version in App Review, empty when none. A
    ///     placeholder (`ReviewVersionRule`) honours nothing.
    ///   - sandboxUsers: users whose sandbox receipts are honoured under `review`.
    ///   - appVersion: the request's `app_version`. A sandbox receipt's own
    ///     `application_version` is the build number (usually "1.0") and is
    ///     deliberately not used.
    public static func admit(
        receipt: AppleReceipt, environment: AppleEnvironment, bundleIDs: [String],
        policy: SandboxPolicy, settingsAreKnown: Bool, reviewVersion: String, sandboxUsers: [String],
        appVersion: String?, userID: String
    ) -> AdmissionResult {
        guard let bundleID = receipt.bundleID else {
            return .rejected(reason: "the receipt names no bundle id")
        }
        guard bundleIDs.contains(bundleID) else {
            return .rejected(reason: "bundle id \(bundleID) is not configured")
        }
        guard environment == .sandbox else { return .admitted }
        switch policy {
        case .always:
            return .admitted
        case .never:
            return .rejected(reason: "sandbox receipts are not honoured (policy never)")
        case .review:
            guard settingsAreKnown else { return .settingsUnknown }
            let effectiveReviewVersion = ReviewVersionRule.effective(reviewVersion)
            let isReviewVersion = !effectiveReviewVersion.isEmpty && appVersion == effectiveReviewVersion
            let isSandboxUser = !userID.isEmpty && sandboxUsers.contains(userID)
            return isReviewVersion || isSandboxUser
                ? .admitted
                : .rejected(reason: "sandbox receipt outside review and not from a sandbox user")
        }
    }
}
