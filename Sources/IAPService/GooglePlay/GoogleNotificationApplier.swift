import IAPCore
import MariaDB

/// Stores a Google Play developer notification and applies its effect
/// (`GoogleNotificationPlan`) in ONE database transaction, with the `events`
/// rows of what it changes: all of it is committed, or nothing is and Pub/Sub
/// pushes it again. A voided purchase, whole or a quantity-based partial
/// refund, is applied by `GoogleVoidedPurchaseLedger`, as voided-sync applies it.
struct GoogleNotificationApplier {
    let connection: MariaDBConnection
    /// The packages configured (`IAP_GOOGLE_PACKAGES`); another's notifications are stored `ignored`.
    let packages: [String]
    /// A PURCHASED push's purchase, read from Google before the database transaction; nil: not read
    /// (Google Play's API not configured), and the push is only stored.
    var notifiedPurchase: GoogleNotifiedPurchase? = nil
    /// Reads the voided purchases a partial refund's push does not carry (their quantities); nil: Google
    /// Play's API not configured, and such a push is only stored (`iapctl google voided-sync` applies it).
    var voidedPurchases: GoogleVoidedPurchaseReader? = nil

    enum Outcome: Equatable {
        /// Its message id was stored before: nothing changed.
        case duplicate
        case stored(GoogleNotificationEffect)
    }

    /// - Throws: the database's error, or `GoogleUnavailable` when a partial refund's voided purchases
    ///   could not be read (nothing stored: Pub/Sub pushes it again).
    func apply(_ message: GooglePushMessage) throws -> Outcome {
        let voided = try voidedPurchasesOfPartialRefund(message.notification)
        return try connection.transactionRetryingDeadlocks(attempts: NotificationApplier.attempts) {
            try applyInTransaction(message, voided: voided, at: .now())
        }
    }

    /// What Google lists of the purchase a partial refund names, read before the database transaction
    /// (the notification itself has no quantity); empty for any other notification.
    private func voidedPurchasesOfPartialRefund(
        _ notification: GoogleDeveloperNotification
    ) throws(GoogleUnavailable) -> [GoogleVoidedPurchase] {
        guard case .partialRefund(let purchaseToken, _) = GoogleNotificationPlan.plan(notification, packages: packages),
            let voidedPurchases
        else { return [] }
        let startTimeMs = GoogleVoidedWindow.notificationStart(
            eventTimeMs: notification.eventTimeMilliseconds, nowMs: SystemClock.wallMilliseconds())
        return try voidedPurchases.all(packageName: notification.packageName, startTimeMs: startTimeMs).get()
            .filter { $0.purchaseToken == purchaseToken }
    }

    private func applyInTransaction(
        _ message: GooglePushMessage, voided: [GoogleVoidedPurchase], at now: Timestamp
    ) throws -> Outcome {
        let notifications = GoogleNotificationStore(connection: connection)
        switch GoogleNotificationPlan.plan(message.notification, packages: packages) {
        case .store(let effect):
            return try notifications.insert(message, effect: effect, at: now) ? .stored(effect) : .duplicate
        case .fullRefund(let purchaseToken, let orderID):
            // The push says when, not how much: the whole purchase, voided at the notification's time.
            let whole = GoogleVoidedPurchase(
                purchaseToken: purchaseToken, orderID: orderID,
                voidedTimeMilliseconds: message.notification.eventTimeMilliseconds, voidedQuantity: nil)
            return try applyVoided([whole], of: message, at: now)
        case .partialRefund:
            return try applyVoided(voided, of: message, at: now)
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

    /// Stores the message, then applies each voided purchase (`GoogleVoidedPurchaseLedger`); the message's
    /// effect is the most any of them did.
    private func applyVoided(
        _ voided: [GoogleVoidedPurchase], of message: GooglePushMessage, at now: Timestamp
    ) throws(MariaDBError) -> Outcome {
        let notifications = GoogleNotificationStore(connection: connection)
        guard try notifications.insert(message, effect: .stored, at: now) else { return .duplicate }
        let ledger = GoogleVoidedPurchaseLedger(connection: connection)
        var effects: [GoogleNotificationEffect] = []
        for purchase in voided {
            effects.append(try ledger.apply(purchase, packageName: message.notification.packageName, at: now).effect)
        }
        let effect = GoogleNotificationEffect.most(of: effects)
        if effect != .stored { try notifications.recordEffect(of: message.messageID, effect) }
        return .stored(effect)
    }
}
