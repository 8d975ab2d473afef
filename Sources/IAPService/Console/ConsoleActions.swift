import Dispatch
import IAPCore
import MariaDB

/// The console's actions, each through the code `iapctl` runs (`LookupDelivery`,
/// `EventRedelivery`, `RefundAnswerNow`, `Setting`, `StaffStore`), each written
/// to `staff_audit` with what came of it.
struct ConsoleActions {
    /// One confirmed request: the form's fields.
    struct Request {
        let action: StaffAction
        let userID: String?
        let target: String
        let value: String
        let role: String
        let password: String
    }

    let connection: MariaDBConnection
    let configuration: ServiceConfiguration
    let appStoreServer: AppStoreServerClient?

    /// Does it and records it; returns what the staff member is told.
    func perform(_ request: Request, by staffName: String, from clientAddress: String?) throws -> String {
        let result: String
        do {
            result = try run(request)
        } catch let failure as StaffStore.Failure {
            result = "refused: \(failure.description)"
        }
        try StaffAudit(connection: connection).record(
            StaffAudit.Entry(
                staffName: staffName, action: request.action.rawValue, userID: request.userID, target: request.target,
                clientAddress: clientAddress, result: result))
        return result
    }

    private func run(_ request: Request) throws -> String {
        switch request.action {
        case .deliverLookup:
            guard let userID = request.userID, UserID.isValid(userID) else { return "refused: no valid user id" }
            let transactions: [ServerAPIQuery.Transaction]
            switch lookUpOrder(request.target) {
            case .success(let found): transactions = found
            case .failure(let error): return "not delivered: Apple's lookup failed (\(error))"
            }
            let lookups = LookupDelivery(configuration: configuration, connection: connection, auditClientAddress: "console")
            let outcomes = try transactions.map { "\($0.transactionID) \(try lookups.deliver($0, to: userID).rawValue)" }
            return outcomes.isEmpty ? "Apple's order holds no transaction" : outcomes.joined(separator: ", ")
        case .redeliverEvent:
            guard let eventID = UInt64(request.target) else { return "refused: not an event id" }
            switch try EventRedelivery.redeliver(eventID: eventID, connection) {
            case .pending: return "event \(eventID) pending: the webhook sends it again"
            case .noSuchEvent: return "no event \(eventID)"
            case .stillSending(let status): return "event \(eventID) is \(status): still being sent, nothing done"
            }
        case .sendRefundAnswer:
            guard let requestID = UInt64(request.target) else { return "refused: not a request id" }
            return "refund request \(requestID): \(try RefundAnswerNow.queue(requestID: requestID, connection).rawValue)"
        case .reviewVersion:
            if request.value.isEmpty {
                try Setting.write("review_version", "", connection)
                return "review version cleared"
            }
            if let problem = Setting.reviewVersionProblem(request.value) { return "refused: \(problem)" }
            try Setting.write("review_version", request.value, connection)
            return "review version set to \(request.value)"
        case .sandboxUsers:
            let users = request.value.split(separator: ",").map(String.init)
            if let problem = users.lazy.compactMap(Setting.sandboxUserProblem).first { return "refused: \(problem)" }
            try Setting.writeSandboxUsers(users, connection)
            return "sandbox users set to \(users.joined(separator: ","))"
        case .staffAdd:
            guard let role = StaffRole(rawValue: request.role) else { return "refused: no such role" }
            try StaffStore(connection: connection).add(name: request.target, role: role, password: request.password)
            return "staff \(request.target) added as \(role.rawValue)"
        case .staffDisable:
            try StaffStore(connection: connection).disable(name: request.target)
            return "staff \(request.target) disabled"
        }
    }

    /// Apple's Look Up Order ID, waited for on this (console) thread.
    func lookUpOrder(_ appleOrderID: String) -> Result<[ServerAPIQuery.Transaction], AppStoreServerError> {
        guard let appStoreServer else { return .failure(.unavailable) }
        let answered = DispatchSemaphore(value: 0)
        let result = Locked<Result<[ServerAPIQuery.Transaction], AppStoreServerError>>(.failure(.unavailable))
        guard appStoreServer.lookUpOrder(appleOrderID, completion: { outcome in
            result.withLock { $0 = outcome.map { $0.map(ServerAPIQuery.Transaction.init) } }
            answered.signal()
        }) else { return .failure(.unavailable) }
        answered.wait()
        return result.withLock { $0 }
    }
}
