import IAPCore
internal import SignedData

/// A notification whose every JWS checked (docs/api.md "POST /v1/notifications/apple"):
/// the outer `signedPayload`, the `signedTransactionInfo` inside it and, for
/// subscriptions, the `signedRenewalInfo`; and whose bundle ids are ours.
struct VerifiedNotification: Sendable {
    let notification: ServerNotification
    /// The JWS as Apple sent it, stored in `notifications.signed_payload`.
    let signedPayload: String
    /// The transaction it carries, verified; nil when it carries none (`TEST`).
    let transaction: SignedTransaction?
    /// That transaction's payload object, as Apple signed it.
    let transactionJSON: JSONObject?
    /// The subscription's renewal info (`signedRenewalInfo`), verified; nil when it carries none.
    var renewalInfo: RenewalInfo? = nil

    /// Why a notification is refused (the log's reason; the answer is always 400 `invalid_signed_data`).
    struct Refusal: Error {
        let reason: String

        /// The part of `reason` a metric may carry: which JWS failed, or `bundle`. The rest can
        /// hold what a sender wrote (a bundle id), which would make a label per forgery.
        var metricReason: String {
            if reason.hasPrefix("bundle id") || reason.contains(": bundle id") { return "bundle" }
            return String(reason.prefix { $0 != ":" })
        }
    }

    /// Verifies everything, offline: CPU only (one P-256 check per JWS once its certificates are known).
    static func verify(
        _ signedPayload: String, verifier: SignedDataVerifier, bundleIDs: [String]
    ) throws(Refusal) -> VerifiedNotification {
        let notification: ServerNotification
        do {
            let (_, json) = try verifier.verify(Array(signedPayload.utf8))
            notification = try ServerNotification(json: json)
        } catch let error as SignedDataError {
            throw Refusal(reason: "signedPayload: \(error.rawValue)")
        } catch let error as ServerNotification.DecodingError {
            throw Refusal(reason: "signedPayload: no usable \(error.field)")
        } catch {
            throw Refusal(reason: "signedPayload: \(error)")
        }
        guard bundleIDs.contains(notification.bundleID) else {
            throw Refusal(reason: "bundle id \(notification.bundleID.prefix(64)) is not configured")
        }
        var renewalInfo: RenewalInfo?
        if let renewal = notification.signedRenewalInfo {
            do {
                renewalInfo = try verifier.verifyRenewalInfo(Array(renewal.utf8)).info
            } catch {
                throw Refusal(reason: "signedRenewalInfo: \(error.rawValue)")
            }
        }
        guard let info = notification.signedTransactionInfo else {
            return VerifiedNotification(
                notification: notification, signedPayload: signedPayload, transaction: nil, transactionJSON: nil,
                renewalInfo: renewalInfo)
        }
        do {
            let (payload, json) = try verifier.verify(Array(info.utf8))
            let transaction = try SignedTransaction(payload: payload, json: json)
            guard bundleIDs.contains(transaction.bundleID) else {
                throw Refusal(reason: "signedTransactionInfo: bundle id \(transaction.bundleID.prefix(64)) is not configured")
            }
            return VerifiedNotification(
                notification: notification, signedPayload: signedPayload, transaction: transaction, transactionJSON: json,
                renewalInfo: renewalInfo)
        } catch let error as SignedDataError {
            throw Refusal(reason: "signedTransactionInfo: \(error.rawValue)")
        } catch let refusal as Refusal {
            throw refusal
        } catch {
            throw Refusal(reason: "signedTransactionInfo: \(error)")
        }
    }
}
