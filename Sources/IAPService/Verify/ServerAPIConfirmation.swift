internal import AppReceipt
import IAPCore
internal import SignedData

/// `IAP_RECEIPT_VERIFIER=server-api`: each transaction of a receipt that
/// passed the checks here is confirmed with the App Store Server API (Get
/// Transaction Info in the receipt's environment, its JWS verified offline)
/// and delivered from Apple's signed transaction, which is current where the
/// receipt may be stale: a refund after the receipt was made shows as the
/// JWS's `revocationDate`, and its `signedDate` orders it among the refund
/// states applied (`VerifiedRefund`).
///
/// Apple is asked only about what the delivery may admit
/// (`ReceiptConfirmationPlan`): a receipt of a bundle not configured, or a
/// sandbox receipt under policy `never`, is handed on as checked here, to be
/// refused by the delivery, and costs no call. Each entry asked about takes
/// one look-up of the minute's budget shared with bare `transaction_id`
/// verifies (`IAP_APPSTORE_LOOKUPS_PER_MINUTE`), all of a receipt's or none:
/// past it, the receipt is `retry_later`, as when Apple is unreachable.
///
/// The calls go out at once, on Apple's client thread; the last answer hands
/// the outcome on (and must only queue it). Any transaction Apple cannot
/// confirm now (unreachable, failing, a JWS that does not verify) makes the
/// receipt `retry_later`, left unverified for the app's retry or `iapctl
/// retry-pending`. One Apple does not know (`4040010` in the receipt's
/// environment) keeps the receipt's own entry: the receipt is signed by
/// Apple, and nothing newer contradicts it.
final class ServerAPIConfirmation: Sendable {
    private let client: AppStoreServerClient

    init(client: AppStoreServerClient) {
        self.client = client
    }

    /// Confirms every `in_app` entry of `receipt`. False when the first call
    /// is refused (too many calls wait their turn): `completion` never runs.
    func confirm(
        _ receipt: VerifiedAppReceipt, deadline: Deadline, completion: @escaping ReceiptConversation.Completion
    ) -> Bool {
        let entries = receipt.receipt.inApp
        guard let environment = ReceiptConfirmationPlan.environment(
            bundleID: receipt.receipt.bundleID, receiptEnvironment: receipt.environment, bundleIDs: client.bundleIDs,
            sandboxPolicy: client.sandboxPolicy)
        else {
            completion(.checkedHere(mode: .serverAPI, reply: receipt.reply, environment: receipt.environment))
            return true
        }
        guard !entries.isEmpty else {
            completion(Self.outcome(receipt, confirmed: []))
            return true
        }
        let nowMs = Int64(SystemClock.monotonicNanoseconds() / 1_000_000)
        guard client.lookups.withLock({ $0.admitConfirmations(entries.count, atMs: nowMs) }) else {
            ServiceMetrics.transactionLookupRefused(reason: .overBudget)
            completion(Self.unconfirmed(receipt))
            return true
        }
        let answers = Locked(Answers(count: entries.count))
        let settle: @Sendable (Int, Result<AppleTransaction, AppStoreServerError>) -> Void = { index, result in
            guard let all = answers.withLock({ $0.record(result, at: index) }) else { return }
            completion(Self.outcome(receipt, confirmed: all))
        }
        for (index, entry) in entries.enumerated() {
            let asked = client.fetchTransactionInfo(
                entry.transactionID, environment: environment, deadline: deadline
            ) { result in
                settle(index, result.map { $0.transaction.appleTransaction(raw: $0.raw) })
            }
            if !asked {
                guard index > 0 else { return false }  // nothing under way: refused as a whole
                settle(index, .failure(.unavailable))
            }
        }
        return true
    }

    /// The receipt with each entry replaced by Apple's signed transaction, or
    /// `unavailable` when one could not be had.
    private static func outcome(_ receipt: VerifiedAppReceipt, confirmed: [Result<AppleTransaction, AppStoreServerError>]) -> AppleOutcome {
        var inApp: [AppleTransaction] = []
        for (entry, answer) in zip(receipt.receipt.inApp, confirmed) {
            switch answer {
            case .success(let current): inApp.append(current)
            case .failure(.notFound): inApp.append(entry)
            case .failure(let error):
                Log.event("verify: the App Store Server API did not confirm transaction \(entry.transactionID): \(error)")
                return unconfirmed(receipt)
            }
        }
        let original = receipt.receipt
        let current = AppleReceipt(
            format: original.format, bundleID: original.bundleID, applicationVersion: original.applicationVersion,
            appItemID: original.appItemID, inApp: inApp, raw: original.raw)
        let reply = AppleReply(status: 0, environment: receipt.reply.environment, receipt: current, raw: receipt.reply.raw)
        return .checkedHere(mode: .serverAPI, reply: reply, environment: receipt.environment)
    }

    /// A receipt whose entries could not be confirmed now: `retry_later`.
    private static func unconfirmed(_ receipt: VerifiedAppReceipt) -> AppleOutcome {
        AppleOutcome(
            verdict: .unavailable(appleStatus: nil), environment: receipt.environment, lastAnswer: nil,
            checkedHere: CheckedHere(mode: .serverAPI))
    }

    /// The answers so far, in entry order.
    private struct Answers {
        var results: [Result<AppleTransaction, AppStoreServerError>?]
        var missing: Int

        init(count: Int) {
            results = Array(repeating: nil, count: count)
            missing = count
        }

        /// Records one answer; all of them once the last is in, else nil.
        mutating func record(_ result: Result<AppleTransaction, AppStoreServerError>, at index: Int) -> [Result<AppleTransaction, AppStoreServerError>]? {
            guard results[index] == nil else { return nil }
            results[index] = result
            missing -= 1
            return missing == 0 ? results.map { $0! } : nil
        }
    }
}
