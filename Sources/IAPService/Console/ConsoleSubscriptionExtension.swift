import IAPCore

extension ConsoleActions {
    /// An App Store chain's renewal date pushed back at Apple (Extend a Subscription Renewal Date), checked
    /// first as `iapctl subscriptions extend` checks it (1 to 90 days, reason 0 to 3). The change is Apple's:
    /// the audit row, with the player the chain's row names, is written once Apple answered, and no row here
    /// is locked while Apple is asked. The chain's `expires_at` here follows with Apple's RENEWAL_EXTENDED
    /// notification (or `iapctl subscriptions sync`).
    func extendSubscription(_ request: Request, _ audit: StaffAudit) throws -> String {
        let chain = try connection.execute(
            "SELECT user_id, store, environment FROM subscriptions WHERE original_transaction_id = ?",
            [.asciiBytes(request.target)]
        ).first
        func recorded(_ result: String) throws -> String {
            try audit.record(.console(.extendSubscription), userID: chain?[0] ?? nil, target: request.target, result: result)
            return result
        }
        guard let chain else { return try recorded("refused: no such subscription chain here") }
        guard chain[1] == "app_store", let environment = chain[2].flatMap(AppleEnvironment.init(rawValue:)) else {
            return try recorded("refused: only App Store chains are extended here")
        }
        let asked: SubscriptionExtensionRequest
        do {
            asked = try SubscriptionExtensionRequest(
                days: Int(request.value) ?? 0, reasonCode: Int(request.reason) ?? -1,
                requestIdentifier: SubscriptionExtensionRequest.newRequestIdentifier())
        } catch {
            // The reasons name iapctl's options (`--days`); here they are the form's fields.
            return try recorded("refused: \(String(error.description.drop { $0 == "-" }))")
        }
        guard let appStoreServer else { return try recorded("not extended: the App Store Server API is not configured") }
        let outcome = SubscriptionExtension(client: appStoreServer, appleTimeoutMs: configuration.appleTimeoutMs)
            .extend(originalTransactionID: request.target, environment: environment, request: asked)
        return try recorded(
            "\(asked.days) days, reason \(asked.reason.rawValue) (\(environment.rawValue), request \(asked.requestIdentifier)):"
                + " \(outcome)")
    }
}
