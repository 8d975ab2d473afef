import IAPCore
import Metrics

extension ServiceMetrics {
    // MARK: app receipts (`ReceiptChecker`)

    /// `iap_receipt_verifications_total{mode}`: a receipt handed to its
    /// checker, by who checks it (`apple`, `local`, `server-api`; an iOS 6
    /// transaction receipt counts as `apple` in every mode).
    static func receiptVerification(mode: ReceiptVerifierMode) {
        receiptVerifications[[mode.rawValue]].increment()
    }

    /// `iap_receipt_check_failures_total{check}`: a receipt refused here, by
    /// the check that failed (`AppReceiptError`'s raw value).
    static func receiptCheckFailed(check: String) {
        receiptCheckFailures[[check]].increment()
    }

    private static let receiptVerifications = MetricFamily<[String], Counter>.counters(
        "iap_receipt_verifications_total", labels: ["mode"])
    private static let receiptCheckFailures = MetricFamily<[String], Counter>.counters(
        "iap_receipt_check_failures_total", labels: ["check"])
}
