/// Where `IAP_RECEIPT_VERIFIER=server-api` confirms the entries of a receipt
/// that passed the checks here with Get Transaction Info: in the environment
/// the receipt was made in, and only there (a purchase made in production is
/// never in the sandbox, nor the reverse), or nowhere when the delivery will
/// refuse the receipt whatever Apple says (the bundle check and the sandbox
/// policy, `Admission`): a bundle id that is not configured, or a sandbox
/// receipt under policy `never`. Such a receipt costs no call to Apple and
/// none of the look-up budget; it is answered as under `local`.
///
/// The other sandbox policies depend on the request and the settings
/// (`app_version`, `sandbox_users`) and are the delivery's to apply.
public enum ReceiptConfirmationPlan {
    /// The environment to ask, nil when Apple is not asked.
    public static func environment(
        bundleID: String?, receiptEnvironment: AppleEnvironment, bundleIDs: [String], sandboxPolicy: SandboxPolicy
    ) -> AppleEnvironment? {
        guard let bundleID, bundleIDs.contains(bundleID) else { return nil }
        if receiptEnvironment == .sandbox, sandboxPolicy == .never { return nil }
        return receiptEnvironment
    }
}
