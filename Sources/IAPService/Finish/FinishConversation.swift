import Curl
import IAPCore

/// One Finish Transaction call, `POST {Server API}/inApps/v1/transactions/{id}/finish`, in the
/// transaction's environment, run by `AppleClient` like the other Server API requests (the same
/// thread, JWT and metrics). It makes exactly one call and hands back what came of it: the retries
/// are the outbox's (`FinishRetryPolicy`), which outlive the process.
final class FinishConversation: AppleConversation {
    typealias Completion = @Sendable (FinishCallOutcome) -> Void

    /// The body of the POST: Apple documents none; an empty JSON object is sent.
    private static let body: [UInt8] = Array("{}".utf8)

    private let url: String
    private let environment: AppleEnvironment
    private let caFile: String?
    private let timeoutMs: Int
    /// The `Authorization` header line of a call starting now.
    private let authorization: @Sendable () -> String
    private let completion: Completion
    let deadline: Deadline
    private var startedAtMs = 0
    private var outcome = FinishCallOutcome.noAnswer(.timeout)

    /// `timeoutMs` bounds the call; `deadline` its wait for a turn among Apple's calls too.
    init(
        transactionID: String, environment: AppleEnvironment, api: AppStoreServerAPIConfiguration, caFile: String?,
        timeoutMs: Int, deadline: Deadline, authorization: @escaping @Sendable () -> String,
        completion: @escaping Completion
    ) {
        self.url = api.baseURL(for: environment) + "/inApps/v1/transactions/\(transactionID)/finish"
        self.environment = environment
        self.caFile = caFile
        self.timeoutMs = timeoutMs
        self.deadline = deadline
        self.authorization = authorization
        self.completion = completion
    }

    var admittedBytes: Int { url.utf8.count }

    func start(atMs now: Int) -> AppleConversationStep {
        startedAtMs = now
        return .call(environment, afterMs: 0)
    }

    func timeLeftMs(atMs now: Int) -> Int {
        max(timeoutMs - (now - startedAtMs), 0)
    }

    func prepare(_ transfer: CurlTransfer, for environment: AppleEnvironment, timeoutMs: Int) throws(CurlError) {
        try transfer.prepare(
            url: url, body: Self.body, caFile: caFile, connectTimeoutMs: min(timeoutMs, 5000),
            totalTimeoutMs: timeoutMs, extraHeaders: [authorization()])
    }

    func next(after result: AppleCallResult, retryAfterUnixMs: Int64?, atMs now: Int) -> AppleConversationStep {
        switch result {
        case .answered(let httpStatus, let body):
            outcome = .answered(httpStatus: httpStatus, body: body, retryAfterUnixMs: retryAfterUnixMs)
        case .transportFailure(let failure):
            outcome = .noAnswer(failure)
        }
        return .finished
    }

    func stopByDeadline() {
        outcome = .noAnswer(.timeout)
    }

    func complete() {
        completion(outcome)
    }
}
