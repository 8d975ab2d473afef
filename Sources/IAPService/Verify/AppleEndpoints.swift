import IAPCore

/// Where and how verifyReceipt is called (from the configuration).
struct AppleEndpoints: Sendable {
    let productionURL: String
    let sandboxURL: String
    /// nil: the system CA bundle.
    let caFile: String?
    /// Sent as `password`; never logged.
    let sharedSecret: String?
    /// Calls under way at once; more wait their turn.
    let maxCalls: Int
    /// Its budget is `IAP_APPLE_TIMEOUT_MS`: one receipt's whole conversation with Apple.
    let retryPolicy: AppleRetryPolicy

    init(_ configuration: ServiceConfiguration) {
        productionURL = configuration.productionURL
        sandboxURL = configuration.sandboxURL
        caFile = configuration.caFile
        sharedSecret = configuration.sharedSecret
        maxCalls = configuration.appleMaxCalls
        retryPolicy = AppleRetryPolicy(budgetMs: configuration.appleTimeoutMs)
    }

    /// A connection must be made within 5 s, or the call's timeout if shorter.
    func connectTimeoutMs(within callTimeoutMs: Int) -> Int { min(callTimeoutMs, 5000) }

    func url(for environment: AppleEnvironment) -> String {
        environment == .production ? productionURL : sandboxURL
    }

    /// The verifyReceipt request body: `receipt-data`, `password` when a shared
    /// secret is configured, and `exclude-old-transactions`.
    func requestBody(receiptBase64: String) -> [UInt8] {
        var body: JSONObject = ["receipt-data": .string(receiptBase64)]
        if let sharedSecret {
            body.members.append((key: "password", value: .string(sharedSecret)))
        }
        body.members.append((key: "exclude-old-transactions", value: .bool(true)))
        // The members' names and punctuation take under 64 bytes.
        return JSONValue.object(body).serialized(capacity: receiptBase64.utf8.count + (sharedSecret?.utf8.count ?? 0) + 64)
    }
}
