/// docs/api.md "POST /v1/transactions/verify" step 3: the bundle check and the
/// sandbox policy for a StoreKit 2 transaction, whose `environment` Apple
/// signed into it. `Production` and `Sandbox` go through `Admission`, as a
/// receipt found valid in that environment would; `Xcode` and `LocalTesting`
/// (StoreKit testing, no payment at all) only under the policy `always`.
public enum SignedTransactionAdmission {
    /// The `environment` values of a signed transaction.
    public enum Environment: String, Sendable, CaseIterable {
        case production = "Production"
        case sandbox = "Sandbox"
        case xcode = "Xcode"
        case localTesting = "LocalTesting"

        /// Where the `transactions` row and the answer place it: the test
        /// environments count as sandbox, so that revenue queries leaving
        /// `Sandbox` out leave them out too (the audit row keeps the exact value).
        public var deliveryEnvironment: AppleEnvironment {
            self == .production ? .production : .sandbox
        }
    }

    /// The admission of a transaction of `bundleID` signed for `environment`
    /// (the raw value from the payload; an unknown one is rejected). The other
    /// parameters are `Admission.admit`'s.
    public static func admit(
        bundleID: String, environment: String, bundleIDs: [String], policy: SandboxPolicy,
        settingsAreKnown: Bool, reviewVersion: String, sandboxUsers: [String], appVersion: String?, userID: String
    ) -> AdmissionResult {
        guard let known = Environment(rawValue: environment) else {
            return .rejected(reason: "unknown environment \(environment.prefix(32))")
        }
        if known == .xcode || known == .localTesting, policy != .always {
            return .rejected(reason: "\(known.rawValue) transactions are honoured only under the policy always")
        }
        let receipt = AppleReceipt(
            format: .appReceipt, bundleID: bundleID, applicationVersion: nil, appItemID: nil, inApp: [])
        return Admission.admit(
            receipt: receipt, environment: known.deliveryEnvironment, bundleIDs: bundleIDs, policy: policy,
            settingsAreKnown: settingsAreKnown, reviewVersion: reviewVersion, sandboxUsers: sandboxUsers,
            appVersion: appVersion, userID: userID)
    }
}
