import Curl
import IAPCore

/// One request to the App Store Server API (`ServerAPICallSequence`), run by
/// `AppleClient`: a GET, or a POST of a JSON body (Get Notification History).
final class ServerAPIConversation: AppleConversation {
    typealias Completion = @Sendable (ServerAPIVerdict) -> Void

    /// e.g. `/inApps/v1/transactions/2000000123456789`.
    private let path: String
    /// The JSON body of a POST; nil: a GET.
    private let body: [UInt8]?
    private let api: AppStoreServerAPIConfiguration
    private let caFile: String?
    /// The `Authorization` header line of a call starting now.
    private let authorization: @Sendable () -> String
    private var sequence: ServerAPICallSequence
    private let completion: Completion
    let deadline: Deadline
    private var verdict = ServerAPIVerdict.unavailable

    init(
        path: String, body: [UInt8]? = nil, sandboxFallback: Bool, firstEnvironment: AppleEnvironment = .production,
        api: AppStoreServerAPIConfiguration, caFile: String?, policy: AppleRetryPolicy,
        authorization: @escaping @Sendable () -> String, deadline: Deadline, completion: @escaping Completion
    ) {
        self.path = path
        self.body = body
        self.api = api
        self.caFile = caFile
        self.authorization = authorization
        self.sequence = ServerAPICallSequence(
            policy: policy, sandboxFallback: sandboxFallback, firstEnvironment: firstEnvironment)
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
            url: api.baseURL(for: environment) + path, body: body, caFile: caFile, authorization: authorization(),
            timeoutMs: timeoutMs)
    }

    func next(after result: AppleCallResult, retryAfterUnixMs: Int64?, atMs now: Int) -> AppleConversationStep {
        let serverResult: ServerAPICallResult
        switch result {
        case .answered(let httpStatus, let body):
            serverResult = .answered(httpStatus: httpStatus, body: body, retryAfterUnixMs: retryAfterUnixMs)
        case .transportFailure(let failure):
            serverResult = .transportFailure(failure)
        }
        return step(sequence.next(after: serverResult, atMs: now, wallClockMs: SystemClock.wallMilliseconds()))
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
        case .finished(let verdict):
            self.verdict = verdict
            return .finished
        }
    }
}
