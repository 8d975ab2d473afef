import IAPCore
import MariaDB

/// Stores a Google Play developer notification and applies its effect
/// (`GoogleNotificationPlan`) in ONE database transaction, with the `events`
/// rows of what it changes: all of it is committed, or nothing is and Pub/Sub
/// pushes it again. A full refund goes the way Apple's REFUND does
/// (`NotifiedTransactionStore.markRefunded`, a `refunded` event).
struct GoogleNotificationApplier {
    let connection: MariaDBConnection
    /// The packages configured (`IAP_GOOGLE_PACKAGES`); another's notifications are stored `ignored`.
    let packages: [String]
    /// A PURCHASED push's purchase, read from Google before the database transaction; nil: not read
    /// (Google Play's API not configured), and the push is only stored.
    var notifiedPurchase: GoogleNotifiedPurchase? = nil

    enum Outcome: Equatable {
        /// Its message id was stored before: nothing changed.
        case duplicate
        case stored(GoogleNotificationEffect)
    }

    func apply(_ message: GooglePushMessage) throws -> Outcome {
        try connection.transactionRetryingDeadlocks(attempts: NotificationApplier.attempts) {
            try applyInTransaction(message, at: .now())
        }
    }

    private func applyInTransaction(_ message: GooglePushMessage, at now: Timestamp) throws -> Outcome {
        let notifications = GoogleNotificationStore(connection: connection)
        switch GoogleNotificationPlan.plan(message.notification, packages: packages) {
        case .store(let effect):
            return try notifications.insert(message, effect: effect, at: now) ? .stored(effect) : .duplicate
        case .fullRefund(let purchaseToken, let orderID):
            guard try notifications.insert(message, effect: .stored, at: now) else { return .duplicate }
            guard let purchase = try notifications.lockedPurchase(purchaseToken: purchaseToken, orderID: orderID) else {
                return .stored(.stored)
            }
            let refund = GoogleFullRefund.decide(purchase.state)
            if case .refund(let takesBack) = refund {
                try refundInWhole(purchase, takesBack: takesBack, at: message.notification.eventTimeMilliseconds, now: now)
            }
            try notifications.recordEffect(of: message.messageID, refund.effect)
            return .stored(refund.effect)
        case .readPurchase:
            guard try notifications.insert(message, effect: .stored, at: now) else { return .duplicate }
            guard let notifiedPurchase else { return .stored(.stored) }
            let effect = try GoogleNotifiedPurchaseWriter(connection: connection).apply(notifiedPurchase, at: now)
            if effect != .stored { try notifications.recordEffect(of: message.messageID, effect) }
            return .stored(effect)
        case .refundReview(let token, let orderID, let reason, let accountID):
            guard try notifications.insert(message, effect: .stored, at: now) else { return .duplicate }
            let effect = try GoogleRefundReviewIntake(connection: connection).note(
                .init(
                    messageID: message.messageID, pendingRefundToken: token, orderID: orderID, reason: reason,
                    obfuscatedAccountID: accountID, requestedAtMs: message.notification.eventTimeMilliseconds),
                at: now)
            try notifications.recordEffect(of: message.messageID, effect)
            return .stored(effect)
        }
    }

    private func refundInWhole(
        _ purchase: GoogleNotificationStore.Purchase, takesBack: Bool, at refundedAtMs: Int64, now: Timestamp
    ) throws(MariaDBError) {
        let orderID = takesBack ? purchase.orderID : nil
        try NotifiedTransactionStore(connection: connection).markRefunded(
            purchase.transactionID, refundedAtMs: refundedAtMs, orderID: orderID, at: now)
        guard let orderID, let userID = purchase.userID else { return }
        let transaction = AppleTransaction(
            transactionID: purchase.transactionID, originalTransactionID: purchase.originalTransactionID,
            productID: purchase.productID, quantity: purchase.quantity)
        try EventStore(connection: connection).record(
            [EventStore.NewEvent(
                .refunded, transaction, orderID: orderID, userID: userID, environment: purchase.environment,
                occurredAtMs: refundedAtMs, store: .googlePlay)],
            at: now)
    }
}
