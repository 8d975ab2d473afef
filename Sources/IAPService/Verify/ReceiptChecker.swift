internal import AppReceipt
import IAPCore
internal import SignedData

/// Who checks a recorded receipt (`IAP_RECEIPT_VERIFIER`, docs/api.md "POST
/// /v1/receipts/verify" step 2): Apple's verifyReceipt through `AppleClient`,
/// or this process (`AppReceiptVerifier`), then, for `server-api`, the App
/// Store Server API per transaction (`ServerAPIConfirmation`). Either way the
/// outcome is an `AppleOutcome` for `ReceiptDelivery`, so that what follows (the
/// bundle check, the sandbox policy, delivery) does not know who checked.
///
/// A check here is CPU work of some tens of microseconds once its chain is
/// cached, done on the caller's thread (the recorder's); its completion runs
/// there too, as verifyReceipt's runs on Apple's thread, and only queues.
final class ReceiptChecker: Sendable {
    private let mode: ReceiptVerifierMode
    private let apple: AppleClient
    private let verifier: AppReceiptVerifier
    private let confirmation: ServerAPIConfirmation?

    /// - Parameter confirmation: required for `server-api`, unused otherwise.
    init(mode: ReceiptVerifierMode, apple: AppleClient, roots: TrustedRoots, confirmation: ServerAPIConfirmation?) {
        precondition(mode != .serverAPI || confirmation != nil, "server-api needs the App Store Server API")
        self.mode = mode
        self.apple = apple
        self.verifier = AppReceiptVerifier(roots: roots)
        self.confirmation = mode == .serverAPI ? confirmation : nil
    }

    /// The checker of a process that is not the service (`iapctl retry-pending`),
    /// with an App Store Server API client of its own under `server-api`.
    static func standalone(_ configuration: ServiceConfiguration, apple: AppleClient) throws -> ReceiptChecker {
        var confirmation: ServerAPIConfirmation?
        if configuration.receiptVerifier == .serverAPI, let signer = try AppStoreServerClient.signer(configuration) {
            let verifier = SignedDataVerifier(roots: try Service.appleRoots(configuration))
            confirmation = ServerAPIConfirmation(
                client: AppStoreServerClient(configuration: configuration, signer: signer, apple: apple, verifier: verifier))
        }
        return ReceiptChecker(
            mode: configuration.receiptVerifier, apple: apple, roots: try roots(configuration), confirmation: confirmation)
    }

    /// The roots an app receipt must chain to: `IAP_APPLE_RECEIPT_ROOT_FILE`,
    /// else Apple Inc. Root CA. A file that cannot be read or holds no
    /// certificate stops the start, naming the variable.
    static func roots(_ configuration: ServiceConfiguration) throws(ConfigurationError) -> TrustedRoots {
        try .configured(
            file: configuration.appleReceiptRootFile, variable: "IAP_APPLE_RECEIPT_ROOT_FILE", fallback: .appleReceipts)
    }

    /// Checks the receipt before `deadline`; `completion` gets the outcome.
    /// False when too many calls to Apple wait their turn: refused, and
    /// `completion` never runs.
    func check(
        receiptBase64: String, deadline: Deadline, completion: @escaping ReceiptConversation.Completion
    ) -> Bool {
        let (route, bytes) = route(receiptBase64)
        guard case .checkHere(let thenConfirm) = route, let bytes else {
            ServiceMetrics.receiptVerification(mode: .apple)
            return apple.verify(receiptBase64: receiptBase64, deadline: deadline, completion: completion)
        }
        switch verifyHere(bytes) {
        case .refused(let refusal):
            completion(refusal)
            return true
        case .verified(let verified):
            guard thenConfirm, let confirmation else {
                completion(.checkedHere(mode: mode, reply: verified.reply, environment: verified.environment))
                return true
            }
            return confirmation.confirm(verified, deadline: deadline, completion: completion)
        }
    }

    /// The outcome at once of a receipt that nothing but this process checks
    /// (`local`, an app receipt), so that its row can be written complete;
    /// nil when Apple is asked (`apple`, an iOS 6 receipt, or `server-api`,
    /// which asks after the check here): `check` then.
    func outcomeWithoutApple(receiptBase64: String) -> AppleOutcome? {
        let (route, bytes) = route(receiptBase64)
        guard route.settledWithoutNetwork, let bytes else { return nil }
        switch verifyHere(bytes) {
        case .refused(let refusal): return refusal
        case .verified(let verified): return .checkedHere(mode: mode, reply: verified.reply, environment: verified.environment)
        }
    }

    /// Who checks the receipt (`ReceiptCheckRoute`), with its bytes when they decode.
    private func route(_ receiptBase64: String) -> (ReceiptCheckRoute, [UInt8]?) {
        guard mode != .apple, let bytes = Base64.decode(receiptBase64) else { return (.verifyReceipt, nil) }
        return (ReceiptCheckRoute(mode: mode, format: AppleReceipt.Format.of(bytes)), bytes)
    }

    private enum Verdict {
        case verified(VerifiedAppReceipt)
        /// The outcome of a receipt that failed a check.
        case refused(AppleOutcome)
    }

    /// The checks here, counted.
    private func verifyHere(_ bytes: [UInt8]) -> Verdict {
        ServiceMetrics.receiptVerification(mode: mode)
        do {
            return .verified(try verifier.verify(bytes))
        } catch {
            ServiceMetrics.receiptCheckFailed(check: error.rawValue)
            return .refused(.refusedHere(mode: mode, check: error.rawValue))
        }
    }
}

extension AppleOutcome {
    /// A receipt that passed the checks here: valid, as verifyReceipt's status
    /// 0; the audit row keeps what verifyReceipt would have answered.
    static func checkedHere(mode: ReceiptVerifierMode, reply: AppleReply, environment: AppleEnvironment) -> AppleOutcome {
        AppleOutcome(checkedHere: .passedHere(reply, environment: environment), mode: mode)
    }

    /// A receipt that failed `check`: invalid, as verifyReceipt's 21003 (the
    /// status is not shown: `apple_status` stays null), the check named in the
    /// audit row's `signed_data_error`.
    static func refusedHere(mode: ReceiptVerifierMode, check: String) -> AppleOutcome {
        AppleOutcome(checkedHere: .refusedHere(check: check), mode: mode)
    }

    /// The outcome of a check made here under `mode`.
    private init(checkedHere outcome: DeliveryDecision.Outcome, mode: ReceiptVerifierMode) {
        self.init(
            verdict: outcome.verdict, environment: outcome.environment, lastAnswer: outcome.lastAnswer,
            checkedHere: CheckedHere(mode: mode, failedCheck: outcome.failedCheck))
    }
}

/// A receipt checked by this process rather than by verifyReceipt: Apple's
/// status is not shown (`apple_status` null); a refused receipt's audit row
/// names the check that failed in `signed_data_error`, the column where a
/// refused JWS's reason goes (no migration, one vocabulary: `badSignature`,
/// `untrustedChain`...), and a valid one keeps in `apple_response` what
/// verifyReceipt would have answered.
struct CheckedHere: Sendable, Equatable {
    let mode: ReceiptVerifierMode
    /// `AppReceiptError`'s raw value; nil when the receipt passed.
    var failedCheck: String? = nil
}
