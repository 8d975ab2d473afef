import IAPCore
import MariaDB
internal import SignedData

/// The refund-request ledger's part of storing an App Store notification (docs/events.md
/// "Refund requests", steps 1 and 6), in the database transaction that stores
/// it, as Google Play's reviews have `GoogleRefundReviewIntake`: a
/// `CONSUMPTION_REQUEST` writes its `consumption_requests` row (or
/// reuses the one not yet sent) with a `refund_requested` event for the game;
/// `REFUND`, `REVOKE` and `REFUND_DECLINED` record Apple's decision on the
/// latest request. The goods never change here. What to change is
/// `RefundRequestChange`'s decision.
struct AppStoreRefundRequestIntake {
    let connection: MariaDBConnection

    /// Runs after the notification's own effect on its transaction: a refund
    /// has locked the transaction's row by then, and a `CONSUMPTION_REQUEST`
    /// locks it first too, so the two take their locks in one order.
    func note(_ verified: VerifiedNotification, at now: Timestamp) throws {
        let notification = verified.notification
        guard RefundRequestChange.concerns(notificationType: notification.notificationType),
            let transaction = verified.transaction, let raw = verified.transactionJSON
        else { return }
        let isRequest = notification.notificationType == RefundRequestChange.requestType
        let delivery = try isRequest ? NotifiedTransactionStore(connection: connection).locked(transaction.transactionID) : nil
        let owner = try isRequest ? Self.owner(of: transaction, delivery: delivery, connection) : nil
        let requests = RefundRequestStore(connection: connection)
        let latest = try requests.latest(of: transaction.transactionID, locking: true)
        let change = RefundRequestChange.decide(
            notificationType: notification.notificationType, signedDate: notification.signedDate,
            latest: latest?.request)
        switch change {
        case .none:
            return
        case .open:
            let asked = Self.asked(notification, transaction, owner: owner)
            let eventID = try tellTheGame(asked, transaction, raw: raw, delivery: delivery, at: now)
            try requests.insert(asked, eventID: eventID, at: now)
        case .reopen(let requestID):
            let asked = Self.asked(notification, transaction, owner: owner)
            let eventID = try latest?.eventID == nil
                ? tellTheGame(asked, transaction, raw: raw, delivery: delivery, at: now) : nil
            try requests.reopen(requestID, asked, eventID: eventID)
        case .close(let requestID, let outcome):
            try requests.recordOutcome(requestID, outcome, decidedAtMs: notification.signedDate)
        }
    }

    /// The `refund_requested` event, when the transaction was delivered here
    /// (an event names its order and user); nil for one never delivered: the
    /// game has nothing of it, and the request is answered without the game.
    private func tellTheGame(
        _ asked: RefundRequestStore.AppStoreAsked, _ transaction: SignedTransaction, raw: JSONObject,
        delivery: NotifiedTransactionStore.Row?, at now: Timestamp
    ) throws(MariaDBError) -> UInt64? {
        guard let orderID = delivery?.orderID, let userID = delivery?.userID else { return nil }
        return try EventStore(connection: connection).recordOne(
            EventStore.NewEvent(
                .refundRequested, transaction.appleTransaction(raw: raw), orderID: orderID, userID: userID,
                environment: asked.environment, occurredAtMs: asked.requestedAtMs),
            at: now)
    }

    /// Whose request it is, for the consent its answer needs: the user the
    /// transaction was delivered to here, else, for a purchase never delivered
    /// here, the user of the order its `appAccountToken` names (the app passed
    /// our order id to StoreKit when the user paid, and Apple signed it in: the
    /// delivery path binds the purchase to that order's user the same way).
    /// Nil: nobody here. The order is read without a lock: its user never changes.
    private static func owner(
        of transaction: SignedTransaction, delivery: NotifiedTransactionStore.Row?, _ connection: MariaDBConnection
    ) throws(MariaDBError) -> String? {
        if delivery?.orderID != nil { return delivery?.userID }
        guard let token = transaction.appAccountToken.flatMap(VerifyRequest.lowercaseUUID) else { return nil }
        return try OrderStore(connection: connection).order(token)?.userID
    }

    private static func asked(
        _ notification: ServerNotification, _ transaction: SignedTransaction, owner: String?
    ) -> RefundRequestStore.AppStoreAsked {
        RefundRequestStore.AppStoreAsked(
            transactionID: transaction.transactionID, originalTransactionID: transaction.originalTransactionID,
            notificationUUID: notification.notificationUUID,
            environment: NotifiedTransactionStore.environment(of: transaction),
            userID: owner, productID: transaction.productID,
            productType: RefundRequestText.column(transaction.type),
            reason: RefundRequestText.column(notification.consumptionRequestReason),
            requestedAtMs: notification.signedDate)
    }
}
