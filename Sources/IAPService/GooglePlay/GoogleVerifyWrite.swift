import IAPCore
import MariaDB

/// What one Google verify writes once Google has answered, inside the caller's database
/// transaction: the decision (`decide`: `GoogleAccountProof`, `GooglePurchaseDecision`), the
/// audit row (`GooglePurchaseAudit`) and, for a paid purchase, its delivery
/// (`GooglePurchaseDelivery`). Nothing is answered before that transaction commits:
/// `GooglePurchaseVerifier` writes several at once (`GoogleVerifyBatch`), or one alone (`write`).
struct GoogleVerifyWrite {
    let connection: MariaDBConnection
    let settings: SettingsCache.Snapshot
    let packages: [String]
    let sandboxPolicy: SandboxPolicy

    /// The answer once written, and whether it delivered something (then Google is owed a finish).
    struct Written {
        let response: Response
        let delivered: Bool

        static func answer(_ answer: VerifyAnswer) -> Written {
            Written(response: .googleVerify(answer), delivered: false)
        }
    }

    /// A verify decided: its audit row, and its answer or what it delivers.
    struct Decided {
        let audit: GooglePurchaseAudit.Row
        let outcome: Outcome

        enum Outcome {
            /// Nothing is delivered: the answer once the audit row is written.
            case answer(Written)
            /// A paid purchase to deliver once its audit row is written.
            case deliver(Delivering)
        }
    }

    /// A paid purchase of a product sold here, admitted, to deliver.
    struct Delivering {
        let deliverable: GooglePurchaseDecision.Deliverable
        let purchase: GooglePurchase
        let request: GoogleVerifyRequest
        let orderID: String?
        let userID: String
        let environment: AppleEnvironment

        func input(receiptID: UInt64) -> GooglePurchaseDelivery.Input {
            GooglePurchaseDelivery.Input(
                deliverable: deliverable, purchase: purchase, request: request, orderID: orderID, userID: userID,
                receiptID: receiptID)
        }

        /// The answer once `delivered` is what the delivery did.
        func written(_ delivered: TransactionAnswer) -> Written {
            let status = VerifyStatus.finalStatus(
                states: [delivered.state], namedTransactionID: nil, namedTransactionPresent: true)
            return Written(
                response: .googleVerify(VerifyAnswer(
                    status: status, environment: environment, orderID: delivered.orderID ?? orderID,
                    transactions: [delivered])),
                delivered: delivered.state == .delivered)
        }
    }

    /// The request's audit row as far as the route and Google's answer tell it.
    static func auditRow(_ request: GooglePurchaseVerifier.Request, read: GooglePurchaseRead) -> GooglePurchaseAudit.Row {
        var row = GooglePurchaseAudit.Row(
            tokenSHA256: GoogleTransactionID.tokenSHA256(request.verify.purchaseToken), orderID: request.verify.orderID,
            userID: request.userID, appVersion: request.verify.appVersion, clientAddress: request.clientAddress,
            receivedAt: request.receivedAt)
        if case .purchase(_, let body) = read { row.googleAnswer = body }
        return row
    }

    /// Decides, writes the audit row and delivers.
    func write(_ request: GooglePurchaseVerifier.Request, read: GooglePurchaseRead) throws -> Written {
        let decided = try decide(request, read: read)
        let receiptID = try GooglePurchaseAudit(connection: connection).record(decided.audit)
        switch decided.outcome {
        case .answer(let written):
            return written
        case .deliver(let delivering):
            return delivering.written(
                try GooglePurchaseDelivery(connection: connection).deliverInTransaction(
                    delivering.input(receiptID: receiptID)))
        }
    }

    /// The decision; it reads only the order the purchase's account id names.
    func decide(_ request: GooglePurchaseVerifier.Request, read: GooglePurchaseRead) throws -> Decided {
        let audit = Self.auditRow(request, read: read)
        switch read {
        case .unavailable:
            return Decided(audit: audit, outcome: .answer(
                .answer(VerifyAnswer(status: .retryLater, orderID: request.verify.orderID))))
        case .unknownToken:
            return Decided(audit: audit, outcome: .answer(
                .answer(VerifyAnswer(status: .notPaid, orderID: request.verify.orderID))))
        case .purchase(let purchase, _):
            return try decide(purchase, request: request, audit: audit)
        }
    }

    private func decide(
        _ purchase: GooglePurchase, request: GooglePurchaseVerifier.Request, audit: GooglePurchaseAudit.Row
    ) throws -> Decided {
        let verify = request.verify
        let accountOrder = try purchase.obfuscatedAccountID.flatMap(GoogleAccountProof.orderID(named:)).flatMap {
            orderID throws(MariaDBError) in
            try OrderStore(connection: connection).order(orderID).map {
                GoogleAccountProof.AccountOrder(orderID: orderID, userID: $0.userID)
            }
        }
        let orderID: String?
        switch GoogleAccountProof.verdict(
            accountID: purchase.obfuscatedAccountID, accountOrder: accountOrder, requestOrderID: verify.orderID,
            requestUserID: request.userID)
        {
        case .orderUserMismatch:
            return Decided(audit: audit, outcome: .answer(Written(response: .error(.orderUserMismatch), delivered: false)))
        case .order(let named): orderID = named
        case .newOrder: orderID = nil
        }
        let userID = accountOrder.map { $0.orderID == orderID ? $0.userID : request.userID } ?? request.userID
        var audit = audit
        audit.orderID = orderID
        audit.userID = userID
        var verdict = GooglePurchaseDecision.decide(
            purchase: purchase, request: verify, packages: packages,
            sandbox: GooglePurchaseDecision.SandboxRules(
                policy: sandboxPolicy, settingsAreKnown: settings.isLoaded, reviewVersion: settings.reviewVersion,
                sandboxUsers: settings.sandboxUsers),
            userID: userID)
        if case .deliverable = verdict {
            // Only what the catalog sells here, active, is delivered.
            if !settings.isLoaded {
                verdict = .settingsUnknown
            } else if settings.products[verify.productID] == nil {
                verdict = .rejected(reason: "product \(verify.productID) is unknown or inactive here")
            }
        }
        let environment: AppleEnvironment = purchase.isTestPurchase ? .sandbox : .production
        audit.environment = environment
        let shown = AppleTransaction(
            transactionID: GoogleTransactionID.of(orderID: purchase.orderID, purchaseToken: verify.purchaseToken),
            productID: verify.productID, quantity: purchase.lineItems.reduce(0) { $0 + $1.quantity },
            purchaseDateMs: purchase.completionTimeMilliseconds)
        audit.transactionID = shown.transactionID
        switch verdict {
        case .rejected(let reason):
            Log.event("google/verify: rejected: \(reason)")
            return Decided(audit: audit, outcome: .answer(.answer(VerifyAnswer(
                status: .rejected, environment: environment, orderID: orderID,
                transactions: [TransactionAnswer(transaction: shown, state: .rejected, orderID: nil)]))))
        case .pending, .notPaid, .settingsUnknown:
            let status: VerifyStatus = verdict == .pending ? .pending : verdict == .notPaid ? .notPaid : .retryLater
            return Decided(audit: audit, outcome: .answer(
                .answer(VerifyAnswer(status: status, environment: environment, orderID: orderID))))
        case .deliverable(let deliverable):
            return Decided(audit: audit, outcome: .deliver(Delivering(
                deliverable: deliverable, purchase: purchase, request: verify, orderID: orderID, userID: userID,
                environment: environment)))
        }
    }
}
