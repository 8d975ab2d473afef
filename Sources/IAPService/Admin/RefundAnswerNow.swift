import IAPCore
import MariaDB

/// The console's "send now" of a refund request's answer, and `iapctl consumption
/// send`: the request back to `pending` with `next_attempt_at` now, so that the
/// sender answers it on its next round, before Apple's 12 hours (`deadline_at`)
/// run out. One the sender holds (a lease not yet expired), already sent, or
/// already decided by Apple (`outcome`: no answer counts any more) is left alone.
public enum RefundAnswerNow {
    public enum Outcome: String, Sendable {
        case queued
        case noSuchRequest = "no_such_request"
        /// Sent, no consent, past Apple's deadline, decided by Apple, or being sent now: nothing to send.
        case notSendable = "not_sendable"
    }

    /// What queueing a transaction's newest request came to (`iapctl consumption send`).
    public enum TransactionOutcome: Equatable, Sendable {
        case queued
        /// The transaction has no refund request.
        case noRequest
        /// Its newest request, with its `status`, is not sendable (`Outcome.notSendable`).
        case notSendable(status: String)
    }

    public static func queue(requestID: UInt64, _ connection: MariaDBConnection) throws -> Outcome {
        let requests = RefundRequestStore(connection: connection)
        if try requests.queueNow(requestID) { return .queued }
        return try requests.exists(requestID) ? .notSendable : .noSuchRequest
    }

    /// The transaction's newest request (a new one is made only once the one before is no longer
    /// pending), queued as `queue(requestID:)` queues it.
    public static func queue(transactionID: String, _ connection: MariaDBConnection) throws -> TransactionOutcome {
        guard let newest = try RefundRequestStore(connection: connection).latest(of: transactionID, locking: false)
        else { return .noRequest }
        switch try queue(requestID: newest.request.requestID, connection) {
        case .queued: return .queued
        case .noSuchRequest: return .noRequest
        case .notSendable: return .notSendable(status: newest.request.status.rawValue)
        }
    }
}
