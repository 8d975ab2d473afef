import Dispatch
import IAPCore
import MariaDB

/// The console's actions, each through the code `iapctl` runs (`LookupDelivery`,
/// `EventRedelivery`, `RefundAnswerNow`, `Setting`, `StaffStore`), each written
/// to `staff_audit` with what came of it, in the database transaction of the
/// change: a change is committed with its row or not at all.
struct ConsoleActions {
    /// One confirmed request: the form's fields.
    struct Request {
        let action: StaffAction
        let userID: String?
        let target: String
        let value: String
        let role: String
        let password: String
        /// Apple's `extendReasonCode` of a subscription extension (`value` holds its days).
        let reason: String
    }

    let connection: MariaDBConnection
    let configuration: ServiceConfiguration
    let appStoreServer: AppStoreServerClient?

    /// Does it and records it; returns what the staff member is told.
    func perform(_ request: Request, by actor: StaffAudit.Actor) throws -> String {
        let audit = StaffAudit(connection: connection, actor: actor)
        let action = AuditAction.console(request.action)
        do {
            switch request.action {
            case .deliverLookup:
                return try deliverLookup(request, audit)
            case .staffAdd:
                guard let role = StaffRole(rawValue: request.role) else {
                    return try recordedAlone(action, request, "refused: no such role", audit)
                }
                return try StaffStore(connection: connection).add(
                    name: request.target, role: role, password: request.password, by: actor)
            case .staffDisable:
                return try StaffStore(connection: connection).disable(name: request.target, by: actor)
            case .redeliverEvent: return try audited(action, request, audit) { try redeliverEvent(request.target) }
            case .sendRefundAnswer: return try audited(action, request, audit) { try sendRefundAnswer(request.target) }
            case .reviewVersion: return try audited(action, request, audit) { try setReviewVersion(request.value) }
            case .sandboxUsers: return try audited(action, request, audit) { try setSandboxUsers(request.value) }
            case .extendSubscription: return try extendSubscription(request, audit)
            }
        } catch let failure as StaffStore.Failure {
            return try recordedAlone(action, request, "refused: \(failure.description)", audit)
        }
    }

    /// The row of an action that changed nothing.
    private func recordedAlone(_ action: AuditAction, _ request: Request, _ result: String, _ audit: StaffAudit) throws -> String {
        try audit.record(action, target: request.target, result: result)
        return result
    }

    /// What `change` did, and whose rows it changed (nil: no player's).
    private typealias Change = (result: String, userID: String?)

    /// `change` and its row, in one database transaction.
    private func audited(
        _ action: AuditAction, _ request: Request, _ audit: StaffAudit, _ change: () throws -> Change
    ) throws -> String {
        try connection.transaction {
            let done = try change()
            try audit.record(action, userID: done.userID, target: request.target, result: done.result)
            return done.result
        }
    }

    private func redeliverEvent(_ target: String) throws -> Change {
        guard let eventID = UInt64(target) else { return ("refused: not an event id", nil) }
        let owner = try ownerOf("SELECT user_id FROM events WHERE event_id = ?", Int64(eventID))
        switch try EventRedelivery.redeliver(eventID: eventID, connection) {
        case .pending: return ("event \(eventID) pending: the webhook sends it again", owner)
        case .noSuchEvent: return ("no event \(eventID)", nil)
        case .stillSending(let status): return ("event \(eventID) is \(status): still being sent, nothing done", owner)
        }
    }

    private func sendRefundAnswer(_ target: String) throws -> Change {
        guard let requestID = UInt64(target) else { return ("refused: not a request id", nil) }
        let owner = try ownerOf("SELECT user_id FROM consumption_requests WHERE request_id = ?", Int64(requestID))
        return ("refund request \(requestID): \(try RefundAnswerNow.queue(requestID: requestID, connection).rawValue)", owner)
    }

    private func setReviewVersion(_ value: String) throws -> Change {
        if value.isEmpty {
            try Setting.write("review_version", "", connection)
            return ("review version cleared", nil)
        }
        if let problem = Setting.reviewVersionProblem(value) { return ("refused: \(problem)", nil) }
        try Setting.write("review_version", value, connection)
        return ("review version set to \(value)", nil)
    }

    private func setSandboxUsers(_ value: String) throws -> Change {
        let users = value.split(separator: ",").map(String.init)
        if let problem = users.lazy.compactMap(Setting.sandboxUserProblem).first { return ("refused: \(problem)", nil) }
        try Setting.writeSandboxUsers(users, connection)
        return ("sandbox users set to \(users.joined(separator: ","))", nil)
    }

    /// The player a row belongs to, read under the lock the change takes on it.
    private func ownerOf(_ sql: String, _ id: Int64) throws -> String? {
        try connection.execute(sql + " FOR UPDATE", [.integer(id)]).first?[0] ?? nil
    }

    /// Each transaction of Apple's order delivered (or not) on its own, each with its audit row: a
    /// delivery's row is written in the transaction that delivers it, so that a failure part-way leaves
    /// every committed delivery with its row.
    private func deliverLookup(_ request: Request, _ audit: StaffAudit) throws -> String {
        guard let userID = request.userID, UserID.isValid(userID) else {
            return try recordedAlone(.console(.deliverLookup), request, "refused: no valid user id", audit)
        }
        let transactions: [ServerAPIQuery.Transaction]
        switch lookUpOrder(request.target) {
        case .success(let found): transactions = found
        case .failure(let error):
            return try recordedAlone(.console(.deliverLookup), request, "not delivered: Apple's lookup failed (\(error))", audit)
        }
        guard !transactions.isEmpty else {
            return try recordedAlone(.console(.deliverLookup), request, "Apple's order holds no transaction", audit)
        }
        let lookups = LookupDelivery(configuration: configuration, connection: connection, auditClientAddress: "console")
        return transactions.map { deliver($0, to: userID, lookups, appleOrderID: request.target, audit) }
            .joined(separator: ", ")
    }

    private func deliver(
        _ transaction: ServerAPIQuery.Transaction, to userID: String, _ lookups: LookupDelivery, appleOrderID: String,
        _ audit: StaffAudit
    ) -> String {
        let transactionID = transaction.transactionID
        func record(_ result: String) throws {
            let owner = try TransactionStore(connection: connection).stored(transactionID)?.userID
            try audit.record(.console(.deliverLookup), userID: owner, target: appleOrderID, result: result)
        }
        var recordedWithChange = false
        do {
            let outcome = try lookups.deliver(transaction, to: userID) { outcome in
                try record("\(transactionID) \(outcome.rawValue)")
                recordedWithChange = true
            }
            // The row written with the change is committed unless the change's transaction failed (retry_later).
            if !recordedWithChange || outcome == .retryLater { try record("\(transactionID) \(outcome.rawValue)") }
            return "\(transactionID) \(outcome.rawValue)"
        } catch {
            Log.event("console: deliver_lookup \(transactionID) failed: \(error)")
            let result = "\(transactionID) not delivered: the database failed, try again"
            try? audit.record(.console(.deliverLookup), target: appleOrderID, result: result)
            return result
        }
    }

    /// Apple's Look Up Order ID, waited for on this (console) thread, never longer than a verification
    /// waits for Apple (`VerificationDeadline`: the conversation's budget and turns in the queues).
    func lookUpOrder(_ appleOrderID: String) -> Result<[ServerAPIQuery.Transaction], AppStoreServerError> {
        guard let appStoreServer else { return .failure(.unavailable) }
        let budgetMs = VerificationDeadline.budgetMs(appleTimeoutMs: configuration.appleTimeoutMs)
        let deadline = Deadline(startNs: SystemClock.monotonicNanoseconds(), budgetMs: budgetMs)
        let answered = DispatchSemaphore(value: 0)
        let result = Locked<Result<[ServerAPIQuery.Transaction], AppStoreServerError>>(.failure(.unavailable))
        guard appStoreServer.lookUpOrder(appleOrderID, deadline: deadline, completion: { outcome in
            result.withLock { $0 = outcome.map { $0.map(ServerAPIQuery.Transaction.init) } }
            answered.signal()
        }) else { return .failure(.unavailable) }
        // The client ends a call at its deadline; a second more, in case its thread is stopping.
        guard answered.wait(timeout: .now() + .milliseconds(budgetMs + 1000)) == .success else { return .failure(.unavailable) }
        return result.withLock { $0 }
    }
}
