import IAPCore
import MariaDB
internal import SignedData

/// `iapctl lookup APPLE_ORDER_ID --user U [--deliver]` (docs/iapctl.md
/// "Purchases"): whose each transaction of a Look Up Order ID answer is, and, with
/// `--deliver`, each one not yet delivered here delivered to U through the
/// same code as `POST /v1/transactions/verify` (`SignedTransactionOrder`,
/// `SignedTransactionDelivery`: the bundle and the sandbox policy, the
/// `appAccountToken` binding, revocation, exactly once), with an audit row of
/// its own (kind `jws`, `client_ip` `iapctl`). The JWS were verified offline
/// when Apple's answer was read (`ServerAPIQuery`).
public struct LookupDelivery {
    /// What `--deliver` did with one transaction.
    public enum Outcome: String, Sendable {
        /// Delivered to the user now.
        case delivered
        /// Delivered before (to whichever user `owner` names): nothing done.
        case alreadyDelivered = "already_delivered"
        /// Revoked by Apple: recorded refunded (a delivered one marked so), never delivered.
        case refunded
        /// Not for us: another bundle id, or sandbox against the policy.
        case rejected
        /// Its `appAccountToken` names an order of another user: nothing done.
        case orderUserMismatch = "order_user_mismatch"
        /// The database failed, or the settings could not be read: try again.
        case retryLater = "retry_later"

        /// Whether the operator must look at it (the exit status is 1).
        public var isFailure: Bool {
            self == .rejected || self == .orderUserMismatch || self == .retryLater
        }
    }

    /// Whose a transaction is, for `--user U`.
    public enum Owner: String, Sendable {
        /// Stored for U, or its `appAccountToken` names an order of U.
        case user = "yes"
        /// Stored for another user, or its token names another user's order.
        case otherUser = "no"
        /// Not here and bound to no order: `--deliver` would give it to U.
        case unbound = "-"
    }

    private let connection: MariaDBConnection
    private let delivery: SignedTransactionDelivery
    /// `receipts.client_ip` of the audit rows it writes: `iapctl`, or `console` for the support console.
    private let auditClientAddress: String

    /// Reads the settings (review version, sandbox users, catalog) once, for the sandbox policy.
    public init(configuration: ServiceConfiguration, connection: MariaDBConnection, auditClientAddress: String = "iapctl") {
        self.connection = connection
        self.auditClientAddress = auditClientAddress
        let settings = SettingsCache()
        settings.refresh(connection)
        delivery = SignedTransactionDelivery(
            bundleIDs: configuration.bundleIDs, sandboxPolicy: configuration.sandboxPolicy, settings: settings)
    }

    /// The transaction's state here (`delivered`, `refunded`...), nil when this database has none.
    public func stateHere(_ transaction: ServerAPIQuery.Transaction) throws -> String? {
        try TransactionStore(connection: connection).stored(transaction.transactionID)?.state
    }

    /// Whose the transaction is, as far as this database tells.
    public func owner(_ transaction: ServerAPIQuery.Transaction, userID: String) throws -> Owner {
        if let stored = try TransactionStore(connection: connection).stored(transaction.transactionID) {
            return stored.userID == userID ? .user : .otherUser
        }
        guard let token = transaction.verified.transaction.appAccountToken.flatMap(VerifyRequest.lowercaseUUID),
              let order = try OrderStore(connection: connection).order(token)
        else { return .unbound }
        return order.userID == userID ? .user : .otherUser
    }

    /// Delivers the transaction to `userID` unless it is delivered (and not
    /// revoked) or refunded here already. `inItsTransaction` runs inside the
    /// database transaction that delivers it (or records it refunded), with what
    /// that comes to: what it writes is committed with the delivery or not at all.
    public func deliver(
        _ transaction: ServerAPIQuery.Transaction, to userID: String, inItsTransaction: (Outcome) throws -> Void = { _ in }
    ) throws -> Outcome {
        let verified = transaction.verified
        let signed = verified.transaction
        switch try stateHere(transaction) {
        case "refunded":
            return .refunded
        case "delivered" where signed.revocationDate == nil:
            return .alreadyDelivered
        default:
            break
        }
        let order: SignedTransactionOrder
        do {
            order = try SignedTransactionOrder.resolve(
                appAccountToken: signed.appAccountToken,
                request: TransactionVerifyRequest(subject: .transactionID(signed.transactionID), userID: userID),
                readOrder: OrderStore(connection: connection).owner)
        } catch let error as APIError where error == .orderUserMismatch {
            return .orderUserMismatch
        }
        let row = SignedTransactionAudit.Row(
            jws: verified.jws, orderID: order.orderID, userID: order.userID, appVersion: nil,
            clientAddress: auditClientAddress, outcome: .verified(signed), receivedAt: .now())
        guard let receiptID = try SignedTransactionAudit(connection: connection).record([row]).first else {
            return .retryLater
        }
        let input = SignedTransactionDelivery.Input(transaction: signed, raw: verified.raw, order: order, appVersion: nil)
        let answer: VerifyAnswer
        switch delivery.step(input, receiptID: receiptID) {
        case .answer(let early):
            answer = early
        case .deliver(let deliveryInput):
            answer = delivery.deliverAlone(input, delivery: deliveryInput, connection: connection) { answers in
                try inItsTransaction(Self.outcome(answers.first?.state))
                // No app is in the loop to finish it: the service does (`TransactionFinisher`).
                guard answers.contains(where: { $0.state == .delivered }) else { return }
                try FinishOutbox(connection: connection).enqueue(
                    signed.transactionID, signedEnvironment: signed.environment, at: .now())
            }
        }
        return Self.outcome(answer.transactions.first?.state)
    }

    private static func outcome(_ state: TransactionState?) -> Outcome {
        switch state {
        case .delivered: return .delivered
        case .alreadyDelivered: return .alreadyDelivered
        case .refunded: return .refunded
        case .rejected: return .rejected
        case nil: return .retryLater
        }
    }
}
