import Dispatch
import IAPCore

/// Apple's subscription calls that staff make: Extend a Subscription Renewal
/// Date (one chain, how a game compensates a player), its mass form for every
/// active subscriber of a product (an outage) with its status, and Get All
/// Subscription Statuses. Each call waits on the caller's own thread (the
/// console's, or iapctl's), never on the cooperative pool, for at most the budget
/// of a verification (`VerificationDeadline`), and goes to the environment the
/// chain lives in. A request is checked (`SubscriptionExtensionRequest`) before
/// it is made, so that Apple is never asked what it would refuse for its shape.
public struct SubscriptionExtension: Sendable {
    /// What came of a call.
    public enum Outcome: Equatable, Sendable, CustomStringConvertible {
        /// One chain extended: its period now ends then (ms since 1970 UTC).
        case extended(effectiveDate: Int64)
        /// A mass extension Apple took; poll `massStatus` with the same request.
        case massAccepted
        /// Apple said no, for this reason (`SubscriptionExtensionAnswer`).
        case refused(String)
        /// No answer to act on: a bad token (401), Apple unavailable, or an answer not as documented.
        case failed(AppStoreServerError)

        /// One line for `staff_audit`, the console and iapctl.
        public var description: String {
            switch self {
            case .extended(let date): return "extended: expires \(AppleDate.iso8601(ms: date))"
            case .massAccepted: return "mass extension requested"
            case .refused(let reason): return "refused: \(reason)"
            case .failed(.unauthorized): return "failed: the App Store Server API refused our token (401)"
            case .failed(.invalidAnswer): return "failed: Apple's answer was not as documented"
            case .failed: return "failed: Apple did not answer in time; try again"
            }
        }
    }

    let client: AppStoreServerClient
    private let appleTimeoutMs: Int

    /// Calls through `client` (iap-fcgi's, or an iapctl `ServerAPIQuery`'s), each within
    /// `IAP_APPLE_TIMEOUT_MS`'s verification budget.
    init(client: AppStoreServerClient, appleTimeoutMs: Int) {
        self.client = client
        self.appleTimeoutMs = appleTimeoutMs
    }

    /// Extends the chain `originalTransactionID` of `environment` by `request.days` days.
    public func extend(
        originalTransactionID: String, environment: AppleEnvironment, request: SubscriptionExtensionRequest
    ) -> Outcome {
        let path: String
        do { path = try SubscriptionExtensionRequest.path(originalTransactionID: originalTransactionID) } catch {
            return .refused(error.description)
        }
        return outcome(call("PUT", path, request.body, environment)) {
            SubscriptionExtensionAnswer.singleChain(httpStatus: $0, body: $1)
        }
    }

    /// Asks Apple to extend every active subscription of `productID` in `environment`.
    public func requestMassExtension(
        productID: String, environment: AppleEnvironment, request: SubscriptionExtensionRequest
    ) -> Outcome {
        let body: [UInt8]
        do { body = try request.massBody(productID: productID) } catch { return .refused(error.description) }
        return outcome(call("POST", SubscriptionExtensionRequest.massPath, body, environment)) {
            SubscriptionExtensionAnswer.massRequest(httpStatus: $0, body: $1, requestIdentifier: request.requestIdentifier)
        }
    }

    /// How far the mass extension `request` of `productID` got.
    public func massStatus(
        productID: String, environment: AppleEnvironment, request: SubscriptionExtensionRequest
    ) -> Result<MassExtensionStatus, MassStatusFailure> {
        let path: String
        do { path = try request.massStatusPath(productID: productID) } catch {
            return .failure(MassStatusFailure(outcome: .refused(error.description)))
        }
        switch call("GET", path, nil, environment) {
        case .answered(let httpStatus, let body):
            switch SubscriptionExtensionAnswer.massStatus(httpStatus: httpStatus, body: body) {
            case .massStatus(let status)?: return .success(status)
            case .refused(_, let reason)?: return .failure(MassStatusFailure(outcome: .refused(reason)))
            default: return .failure(MassStatusFailure(outcome: .failed(.invalidAnswer)))
            }
        case .unauthorized: return .failure(MassStatusFailure(outcome: .failed(.unauthorized)))
        case .unavailable: return .failure(MassStatusFailure(outcome: .failed(.unavailable)))
        }
    }

    /// Why a mass extension's status was not read.
    public struct MassStatusFailure: Error, Equatable, Sendable {
        public let outcome: Outcome
    }

    /// Get All Subscription Statuses of the customer who owns `transactionID` in `environment`, as
    /// Apple signed it (the caller verifies each JWS). `notFound`: Apple knows no such transaction there.
    public func statuses(
        transactionID: String, environment: AppleEnvironment
    ) -> Result<SubscriptionStatusesReply, AppStoreServerError> {
        guard let path = SubscriptionStatusesReply.path(transactionID: transactionID) else { return .failure(.notFound) }
        switch call("GET", path, nil, environment) {
        case .answered(200, let body):
            return SubscriptionStatusesReply(body: body).map { .success($0) } ?? .failure(.invalidAnswer)
        case .answered(400, _), .answered(404, _):
            return .failure(.notFound)
        case .answered:
            return .failure(.invalidAnswer)
        case .unauthorized:
            return .failure(.unauthorized)
        case .unavailable:
            return .failure(.unavailable)
        }
    }

    private func outcome(
        _ verdict: CallVerdict, _ read: (Int, [UInt8]) -> SubscriptionExtensionAnswer?
    ) -> Outcome {
        switch verdict {
        case .answered(let httpStatus, let body):
            switch read(httpStatus, body) {
            case .extended(let date)?: return .extended(effectiveDate: date)
            case .massAccepted?: return .massAccepted
            case .refused(_, let reason)?: return .refused(reason)
            case .massStatus?, nil: return .failed(.invalidAnswer)
            }
        case .unauthorized: return .failed(.unauthorized)
        case .unavailable: return .failed(.unavailable)
        }
    }

    /// One call, waited for on this thread until it ends or its deadline passes (and a second more, in
    /// case the client's thread is stopping).
    private func call(
        _ method: String, _ path: String, _ body: [UInt8]?, _ environment: AppleEnvironment
    ) -> CallVerdict {
        let budgetMs = VerificationDeadline.budgetMs(appleTimeoutMs: appleTimeoutMs)
        let deadline = Deadline(startNs: SystemClock.monotonicNanoseconds(), budgetMs: budgetMs)
        let answered = DispatchSemaphore(value: 0)
        let verdict = Locked(CallVerdict.unavailable)
        // The chain's own environment only; Apple's refusals (an extension it declines is a 400 or
        // 403) are answers to read, not faults to retry.
        let sequence = ServerAPICallSequence(
            policy: AppleRetryPolicy(budgetMs: appleTimeoutMs), sandboxFallback: false, firstEnvironment: environment,
            answersRefusals: true)
        let exchange = ServerAPIExchange(method, path: path, body: body, client: client) { outcome in
            verdict.withLock { $0 = CallVerdict(outcome) }
            answered.signal()
        }
        guard client.apple.submit(CallConversation(sequence, exchange: exchange, deadline: deadline)) else {
            return .unavailable
        }
        guard answered.wait(timeout: .now() + .milliseconds(budgetMs + 1000)) == .success else { return .unavailable }
        return verdict.withLock { $0 }
    }

    /// How a call ended, as the callers above read it.
    enum CallVerdict: Equatable, Sendable {
        /// 200, or a 4xx other than 401 and 429, with its body.
        case answered(httpStatus: Int, body: [UInt8])
        /// 401: the key, key id, issuer id or bundle id is wrong.
        case unauthorized
        /// Apple unreachable, failing or rate-limiting past the budget.
        case unavailable

        init(_ verdict: ServerAPIVerdict) {
            switch verdict {
            case .answered(let body, _): self = .answered(httpStatus: 200, body: body)
            case .refused(let httpStatus, let body): self = .answered(httpStatus: httpStatus, body: body)
            case .unauthorized: self = .unauthorized
            case .notFound, .unavailable: self = .unavailable
            }
        }
    }
}
