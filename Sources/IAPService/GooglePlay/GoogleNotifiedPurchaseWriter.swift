import IAPCore
import MariaDB

/// A purchase a PURCHASED push named, as Google's productsv2 describes it, with the catalog and
/// sandbox rules a delivery is checked against.
struct GoogleNotifiedPurchase {
    /// `.purchase` or `.unknownToken`: a read Google did not answer is never applied.
    let read: GooglePurchaseRead
    let purchaseToken: String
    let packageName: String
    let packages: [String]
    let settings: SettingsCache.Snapshot
    let sandboxPolicy: SandboxPolicy
}

/// Writes what a PURCHASED push does to the ledger, inside the database transaction that stores
/// the push (`GoogleNotificationApplier`): the purchase delivered to the order its account id
/// names exactly as a verify delivers it (`GooglePurchaseDelivery`, with an audit row of kind
/// `google` holding Google's answer), or held in a `transactions` row `unclaimed` for the first
/// verify that shows it. An unclaimed purchase owes Google nothing yet: it is consumed or
/// acknowledged once a verify delivers it, and a purchase no app ever claims is refunded by
/// Google after 3 days rather than kept undelivered.
struct GoogleNotifiedPurchaseWriter {
    let connection: MariaDBConnection

    /// The catalog is not read yet: the push is answered 503 and Pub/Sub pushes it again.
    struct SettingsNotLoaded: Error {}

    func apply(_ notified: GoogleNotifiedPurchase, at now: Timestamp) throws -> GoogleNotificationEffect {
        // 404/410 proves nothing: nothing to hold or deliver.
        guard case .purchase(let purchase, let body) = notified.read else { return .stored }
        guard notified.settings.isLoaded else { throw SettingsNotLoaded() }
        let accountOrder = try purchase.obfuscatedAccountID.flatMap(GoogleAccountProof.orderID(named:)).flatMap {
            orderID throws(MariaDBError) in
            try OrderStore(connection: connection).order(orderID).map {
                GoogleAccountProof.AccountOrder(orderID: orderID, userID: $0.userID)
            }
        }
        let verdict = GoogleNotifiedPurchaseDecision.decide(
            purchase, accountOrder: accountOrder, sells: { notified.settings.products[$0] != nil })
        switch verdict {
        case .deliver(let order, let productID):
            return try deliver(purchase, body: body, to: order, productID: productID, notified, at: now)
        case .holdUnclaimed(let productID):
            return try holdUnclaimed(purchase, productID: productID, purchaseToken: notified.purchaseToken, at: now)
        case .store, .pending, .cancelled:
            return verdict.effectWithoutDelivery ?? .stored
        }
    }

    private func deliver(
        _ purchase: GooglePurchase, body: [UInt8], to order: GoogleAccountProof.AccountOrder, productID: String,
        _ notified: GoogleNotifiedPurchase, at now: Timestamp
    ) throws -> GoogleNotificationEffect {
        let request = GoogleVerifyRequest(
            packageName: notified.packageName, productID: productID, purchaseToken: notified.purchaseToken,
            orderID: order.orderID, userID: order.userID, appVersion: nil)
        let verdict = GooglePurchaseDecision.decide(
            purchase: purchase, request: request, packages: notified.packages,
            sandbox: GooglePurchaseDecision.SandboxRules(
                policy: notified.sandboxPolicy, settingsAreKnown: true, reviewVersion: notified.settings.reviewVersion,
                sandboxUsers: notified.settings.sandboxUsers),
            userID: order.userID)
        guard case .deliverable(let deliverable) = verdict else {
            // A test purchase the sandbox policy refuses without an app version: a verify decides it.
            Log.event("notifications/google: purchase not delivered by the push: \(verdict)")
            return .stored
        }
        let receiptID = try GooglePurchaseAudit(connection: connection).record(GooglePurchaseAudit.Row(
            tokenSHA256: GoogleTransactionID.tokenSHA256(notified.purchaseToken), orderID: order.orderID,
            userID: order.userID, appVersion: nil, clientAddress: nil, receivedAt: now,
            transactionID: deliverable.transactionID, environment: deliverable.environment, googleAnswer: body))
        let answer = try GooglePurchaseDelivery(connection: connection).deliverInTransaction(
            GooglePurchaseDelivery.Input(
                deliverable: deliverable, purchase: purchase, request: request, orderID: order.orderID,
                userID: order.userID, receiptID: receiptID))
        return answer.state == .delivered ? .delivered : .unchanged
    }

    /// A paid purchase no order here names; unchanged when its token or id is stored already.
    private func holdUnclaimed(
        _ purchase: GooglePurchase, productID: String, purchaseToken: String, at now: Timestamp
    ) throws(MariaDBError) -> GoogleNotificationEffect {
        let transactionID = GoogleTransactionID.of(orderID: purchase.orderID, purchaseToken: purchaseToken)
        let environment: AppleEnvironment = purchase.isTestPurchase ? .sandbox : .production
        let purchasedMs = purchase.completionTimeMilliseconds ?? now.milliseconds
        let inserted = try connection.execute(
            """
            INSERT INTO transactions (transaction_id, store, original_transaction_id, purchase_token,
              purchase_token_sha256, order_id, user_id, product_id, quantity, environment, purchase_date, state,
              receipt_id, created_at)
            VALUES (?, 'google_play', ?, ?, ?, NULL, NULL, ?, ?, ?, ?, 'unclaimed', NULL, ?)
            ON DUPLICATE KEY UPDATE transaction_id = transactions.transaction_id
            """,
            [
                .text(transactionID), .text(transactionID), .text(purchaseToken),
                .text(GoogleTransactionID.tokenSHA256(purchaseToken)), .text(productID),
                .integer(Int64(purchase.lineItems.reduce(0) { $0 + $1.quantity })), .text(environment.rawValue),
                .text(AppleDate.sqlDateTime(ms: purchasedMs)), .text(now.sql),
            ]
        ).affectedRows == 1
        return inserted ? .unclaimed : .unchanged
    }
}
