/// Who checks a receipt under `IAP_RECEIPT_VERIFIER` (docs/configuration.md
/// "App receipts checked here"): an app receipt is checked by this process
/// under `local` and `server-api`; everything else (the `apple` mode, an iOS 6
/// transaction receipt, bytes that are not base64) goes to Apple's
/// verifyReceipt, which answers for any of them.
public enum ReceiptCheckRoute: Equatable, Sendable {
    /// Apple's verifyReceipt decides.
    case verifyReceipt
    /// This process checks the app receipt; when `thenConfirm`
    /// (`server-api`), the App Store Server API confirms each of its
    /// transactions after the check passed.
    case checkHere(thenConfirm: Bool)

    /// The route of a receipt of `format` (nil: its base64 does not decode)
    /// under `mode`.
    public init(mode: ReceiptVerifierMode, format: AppleReceipt.Format?) {
        guard mode != .apple, format == .appReceipt else {
            self = .verifyReceipt
            return
        }
        self = .checkHere(thenConfirm: mode == .serverAPI)
    }

    /// The outcome is known without any network call (`local`, an app
    /// receipt), so the receipt's row can be written complete at once.
    public var settledWithoutNetwork: Bool {
        self == .checkHere(thenConfirm: false)
    }
}

extension DeliveryDecision.Outcome {
    /// An app receipt that passed the checks here: valid, as verifyReceipt's
    /// status 0; the audit row keeps what verifyReceipt would have answered.
    public static func passedHere(_ reply: AppleReply, environment: AppleEnvironment) -> Self {
        Self(
            verdict: .valid(reply, environment: environment), environment: environment,
            lastAnswer: JSONValue.object(reply.raw).serialized(), checkedHere: true)
    }

    /// An app receipt that failed `check` here: invalid, as verifyReceipt's
    /// 21003 (the status itself is not shown), in production, with nothing
    /// answered, the check named for the audit row's `signed_data_error`.
    public static func refusedHere(check: String) -> Self {
        Self(
            verdict: .invalid(appleStatus: AppleStatus.notAuthenticated.rawValue), environment: .production,
            lastAnswer: nil, checkedHere: true, failedCheck: check)
    }
}
