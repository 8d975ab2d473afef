import Curl
import IAPCore

/// One call about a subscription to the App Store Server API (Get All Subscription
/// Statuses, Extend a Subscription Renewal Date and its mass form), in the one
/// environment the chain lives in, run by `AppleClient`. Retried as
/// `ServerAPICallSequence` retries (429 after its `Retry-After`, 5xx and failed
/// transfers within the budget); any other 4xx is an answer of its own, whose
/// `errorCode` the caller reads (an extension Apple refuses is a 400 or 403, not a fault).
final class SubscriptionCallConversation: AppleConversation {
    enum Verdict: Equatable, Sendable {
        /// 200, or a 4xx other than 401 and 429, with its body.
        case answered(httpStatus: Int, body: [UInt8])
        /// 401: the key, key id, issuer id or bundle id is wrong.
        case unauthorized
        /// Apple unreachable, failing or rate-limiting past the budget.
        case unavailable
    }

    typealias Completion = @Sendable (Verdict) -> Void

    private let method: String
    private let path: String
    private let body: [UInt8]?
    private let api: AppStoreServerAPIConfiguration
    private let caFile: String?
    private let authorization: @Sendable () -> String
    private var sequence: ServerAPICallSequence
    private let completion: Completion
    let deadline: Deadline
    private var verdict = Verdict.unavailable

    /// `method` GET (no `body`), PUT or POST (a JSON `body`) of `path` in `environment`.
    init(
        method: String, path: String, body: [UInt8]?, environment: AppleEnvironment, client: AppStoreServerClient,
        policy: AppleRetryPolicy, deadline: Deadline, completion: @escaping Completion
    ) {
        self.method = method
        self.path = path
        self.body = body
        self.api = client.api
        self.caFile = client.caFile
        self.authorization = { [client] in client.authorizationHeader() }
        self.sequence = ServerAPICallSequence(policy: policy, sandboxFallback: false, firstEnvironment: environment)
        self.deadline = deadline
        self.completion = completion
    }

    var admittedBytes: Int { path.utf8.count + (body?.count ?? 0) }

    func start(atMs now: Int) -> AppleConversationStep {
        step(sequence.start(atMs: now))
    }

    func timeLeftMs(atMs now: Int) -> Int {
        sequence.timeLeftMs(atMs: now)
    }

    func prepare(_ transfer: CurlTransfer, for environment: AppleEnvironment, timeoutMs: Int) throws(CurlError) {
        try transfer.prepareServerAPICall(
            url: api.baseURL(for: environment) + path, body: body, method: method, caFile: caFile,
            authorization: authorization(), timeoutMs: timeoutMs)
    }

    func next(after result: AppleCallResult, retryAfterUnixMs: Int64?, atMs now: Int) -> AppleConversationStep {
        switch result {
        case .answered(let httpStatus, let body) where (400..<500).contains(httpStatus) && httpStatus != 401
            && httpStatus != 429:
            verdict = .answered(httpStatus: httpStatus, body: body)
            return .finished
        case .answered(let httpStatus, let body):
            let answered = ServerAPICallResult.answered(
                httpStatus: httpStatus, body: body, retryAfterUnixMs: retryAfterUnixMs)
            return step(sequence.next(after: answered, atMs: now, wallClockMs: SystemClock.wallMilliseconds()))
        case .transportFailure(let failure):
            return step(sequence.next(after: .transportFailure(failure), atMs: now, wallClockMs: SystemClock.wallMilliseconds()))
        }
    }

    func stopByDeadline() {
        verdict = .unavailable
    }

    func complete() {
        completion(verdict)
    }

    private func step(_ next: ServerAPINextStep) -> AppleConversationStep {
        switch next {
        case .call(let environment, let afterMs):
            return .call(environment, afterMs: afterMs)
        case .finished(.answered(let body, _)):
            verdict = .answered(httpStatus: 200, body: body)
        case .finished(.unauthorized):
            verdict = .unauthorized
        case .finished(.notFound), .finished(.unavailable):
            verdict = .unavailable
        }
        return .finished
    }
}

extension CurlTransfer {
    /// A call to the App Store Server API: a GET without `body`, else `body` (JSON) sent with `method`;
    /// `authorization` is its `Authorization` header line. Connecting may take at most 5 s of `timeoutMs`.
    func prepareServerAPICall(
        url: String, body: [UInt8]?, method: String = "POST", caFile: String?, authorization: String, timeoutMs: Int
    ) throws(CurlError) {
        if let body {
            try prepare(
                url: url, body: body, caFile: caFile, connectTimeoutMs: min(timeoutMs, 5000), totalTimeoutMs: timeoutMs,
                extraHeaders: [authorization], method: method)
        } else {
            try prepareGET(
                url: url, extraHeaders: [authorization], caFile: caFile, connectTimeoutMs: min(timeoutMs, 5000),
                totalTimeoutMs: timeoutMs)
        }
    }
}
