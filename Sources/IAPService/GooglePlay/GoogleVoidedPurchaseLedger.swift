import IAPCore
import MariaDB

/// Applies one voided purchase (a refund, chargeback or revocation Google
/// reports) to the Google purchase it names, inside the caller's database
/// transaction: the push of a voided purchase and `iapctl google voided-sync`
/// both come here.
///
/// Exactly once: each voided purchase applied leaves a `google_notifications`
/// row whose `message_id` is its `ledgerKey` (the purchase token's SHA-256 and
/// the moment Google voided it), inserted under the purchase row's lock. The
/// same voided purchase seen again (pushed again under a new message id, or
/// listed again) finds that row and changes nothing; two partial refunds of one
/// purchase are two rows. A purchase the ledger does not hold leaves no row, so
/// a later run applies it once the purchase is here.
struct GoogleVoidedPurchaseLedger {
    let connection: MariaDBConnection

    enum Outcome: Equatable {
        /// No Google purchase here has its token or order id.
        case notHere
        /// Applied before (its `ledgerKey` row is there): nothing changed.
        case alreadyApplied(transactionID: String)
        case applied(transactionID: String, quantity: Int, GoogleVoidedRefund)

        /// The `google_notifications.effect` of a notification that brought it.
        var effect: GoogleNotificationEffect {
            switch self {
            case .notHere: return .stored
            case .alreadyApplied: return .unchanged
            case .applied(_, _, let refund): return refund.effect
            }
        }
    }

    func apply(_ voided: GoogleVoidedPurchase, packageName: String, at now: Timestamp) throws(MariaDBError) -> Outcome {
        let notifications = GoogleNotificationStore(connection: connection)
        guard let purchase = try notifications.lockedPurchase(purchaseToken: voided.purchaseToken, orderID: voided.orderID)
        else { return .notHere }
        let refund = GoogleVoidedRefund.decide(
            purchase.state, quantity: purchase.quantity, refundedQuantity: purchase.refundedQuantity,
            voidedQuantity: voided.voidedQuantity)
        guard try recordApplied(voided, packageName: packageName, effect: refund.effect, at: now) else {
            return .alreadyApplied(transactionID: purchase.transactionID)
        }
        switch refund {
        case .unchanged:
            break
        case .part(let quantity, let takesBack):
            try addRefundedQuantity(quantity, to: purchase.transactionID)
            if takesBack { try recordRefundedEvent(purchase, refundedQuantity: quantity, at: voided, now: now) }
        case .whole(let takesBack, let refundedQuantity):
            if let refundedQuantity { try addRefundedQuantity(refundedQuantity, to: purchase.transactionID) }
            // A whole refund of something never delivered takes nothing back: the order stays as it is.
            try NotifiedTransactionStore(connection: connection).markRefunded(
                purchase.transactionID, refundedAtMs: voided.voidedTimeMilliseconds,
                orderID: takesBack ? purchase.orderID : nil, at: now)
            if takesBack { try recordRefundedEvent(purchase, refundedQuantity: refundedQuantity, at: voided, now: now) }
        }
        if refund != .unchanged {
            try RefundRequestStore(connection: connection).recordGoogleRefund(
                orderID: purchase.transactionID, refundedAtMs: voided.voidedTimeMilliseconds)
        }
        return .applied(transactionID: purchase.transactionID, quantity: purchase.quantity, refund)
    }

    /// Inserts the voided purchase's row; false when it was applied before.
    private func recordApplied(
        _ voided: GoogleVoidedPurchase, packageName: String, effect: GoogleNotificationEffect, at now: Timestamp
    ) throws(MariaDBError) -> Bool {
        try connection.execute(
            """
            INSERT INTO google_notifications (message_id, package_name, kind, purchase_token_sha256, order_id,
              event_time, received_at, effect)
            VALUES (?, ?, 'voidedPurchase', ?, ?, ?, ?, ?)
            ON DUPLICATE KEY UPDATE message_id = message_id
            """,
            [
                .text(voided.ledgerKey), .text(String(packageName.prefix(255))),
                .text(GoogleTransactionID.tokenSHA256(voided.purchaseToken)),
                .optional(voided.orderID.map { String($0.prefix(64)) }),
                .text(AppleDate.sqlDateTime(ms: voided.voidedTimeMilliseconds)), .text(now.sql), .text(effect.rawValue),
            ]
        ).affectedRows == 1
    }

    private func addRefundedQuantity(_ quantity: Int, to transactionID: String) throws(MariaDBError) {
        try connection.execute(
            "UPDATE transactions SET refunded_quantity = refunded_quantity + ? WHERE transaction_id = ?",
            [.integer(Int64(quantity)), .text(transactionID)]
        ).requireRows(1, "UPDATE transactions refunded_quantity")
    }

    /// The game's `refunded` event; `refundedQuantity` nil: the whole purchase.
    private func recordRefundedEvent(
        _ purchase: GoogleNotificationStore.Purchase, refundedQuantity: Int?, at voided: GoogleVoidedPurchase,
        now: Timestamp
    ) throws(MariaDBError) {
        guard let orderID = purchase.orderID, let userID = purchase.userID else { return }
        let transaction = AppleTransaction(
            transactionID: purchase.transactionID, originalTransactionID: purchase.originalTransactionID,
            productID: purchase.productID, quantity: purchase.quantity)
        try EventStore(connection: connection).record(
            [EventStore.NewEvent(
                .refunded, transaction, orderID: orderID, userID: userID, environment: purchase.environment,
                occurredAtMs: voided.voidedTimeMilliseconds, store: .googlePlay, refundedQuantity: refundedQuantity)],
            at: now)
    }
}
