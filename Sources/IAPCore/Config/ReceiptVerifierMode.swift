/// Who checks app receipts (`IAP_RECEIPT_VERIFIER`, docs/configuration.md
/// "App receipts checked here"). iOS 6 transaction receipts go to verifyReceipt in every mode.
public enum ReceiptVerifierMode: String, Sendable, CaseIterable {
    /// Apple's verifyReceipt (deprecated by Apple, still answering). The default.
    case apple
    /// iap-fcgi itself, with no network call: signature, chain to
    /// `IAP_APPLE_RECEIPT_ROOT_FILE`, marker OIDs, validity at the creation date.
    case local
    /// As `local`, then each transaction confirmed with the App Store Server
    /// API's Get Transaction Info, and delivered from Apple's signed transaction.
    case serverAPI = "server-api"
}
