import Curl
import IAPCore

/// One PUT of Send Consumption Information, run by `AppleClient` on its
/// thread: a single call to the request's environment, its answer handed over
/// as it came. The sender keeps the retries in the database (`ConsumptionRetryPolicy`),
/// so that they outlive the process and span the 12 hours Apple allows.
final class ConsumptionConversation: AppleConversation {
    typealias Completion = @Sendable (ConsumptionRetryPolicy.Result) -> Void

    private let url: String
    private let body: [UInt8]
    private let environment: AppleEnvironment
    private let caFile: String?
    private let authorization: @Sendable () -> String
    /// The call's limit (`IAP_APPLE_TIMEOUT_MS`).
    private let budgetMs: Int
    private let completion: Completion
    let deadline = Deadline.never
    private var startedAtMs = 0
    private var result = ConsumptionRetryPolicy.Result.noAnswer("no answer")

    init(
        url: String, body: [UInt8], environment: AppleEnvironment, caFile: String?, budgetMs: Int,
        authorization: @escaping @Sendable () -> String, completion: @escaping Completion
    ) {
        self.url = url
        self.body = body
        self.environment = environment
        self.caFile = caFile
        self.budgetMs = budgetMs
        self.authorization = authorization
        self.completion = completion
    }

    var admittedBytes: Int { url.utf8.count + body.count }

    func start(atMs now: Int) -> AppleConversationStep {
        startedAtMs = now
        return .call(environment, afterMs: 0)
    }

    func timeLeftMs(atMs now: Int) -> Int {
        startedAtMs + budgetMs - now
    }

    func prepare(_ transfer: CurlTransfer, for environment: AppleEnvironment, timeoutMs: Int) throws(CurlError) {
        try transfer.prepare(
            url: url, body: body, caFile: caFile, connectTimeoutMs: min(timeoutMs, 5000), totalTimeoutMs: timeoutMs,
            extraHeaders: [authorization()], method: "PUT")
    }

    func next(after result: AppleCallResult, retryAfterUnixMs: Int64?, atMs now: Int) -> AppleConversationStep {
        switch result {
        case .answered(let httpStatus, let body):
            self.result = .answered(httpStatus: httpStatus, body: body, retryAfterUnixMs: retryAfterUnixMs)
        case .transportFailure(let failure):
            self.result = .noAnswer("no answer (\(failure))")
        }
        return .finished
    }

    func stopByDeadline() {
        result = .noAnswer("no answer within \(budgetMs) ms")
    }

    func complete() {
        completion(result)
    }
}
