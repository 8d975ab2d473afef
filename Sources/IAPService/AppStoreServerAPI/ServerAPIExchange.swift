import Curl
import IAPCore

/// How a request goes to the App Store Server API, whatever its sequence: `method` of `path` in the
/// environment asked (a GET without a body, else the JSON body), with a fresh JWT. Two sequences run it:
/// `ServerAPICallSequence` (Get Transaction Info, Look Up Order ID, notification history, subscription
/// statuses and extensions: retried within the budget) and `SingleCallSequence` (Finish Transaction,
/// Send Consumption Information: one call, whose retries the caller keeps in the database).
final class ServerAPIExchange<Sequence: CallSequence>: CallExchange where Sequence.Target == AppleEnvironment {
    typealias Completion = @Sendable (Sequence.Verdict) -> Void

    /// e.g. `/inApps/v1/transactions/2000000123456789`.
    private let path: String
    /// GET when there is no `body`, else POST or PUT.
    private let method: String
    private let body: [UInt8]?
    private let api: AppStoreServerAPIConfiguration
    private let caFile: String?
    /// The `Authorization` header line of a call starting now.
    private let authorization: @Sendable () -> String
    /// What the sequence reads of a call's result and its `Retry-After` (a UNIX time in ms).
    private let reading: (AppleCallResult, Int64?) -> Sequence.Result
    private let completion: Completion

    init(
        _ method: String = "POST", path: String, body: [UInt8]? = nil, client: AppStoreServerClient,
        reading: @escaping (AppleCallResult, Int64?) -> Sequence.Result, completion: @escaping Completion
    ) {
        self.method = method
        self.path = path
        self.body = body
        self.api = client.api
        self.caFile = client.caFile
        self.authorization = { [client] in client.authorizationHeader() }
        self.reading = reading
        self.completion = completion
    }

    var admittedBytes: Int { path.utf8.count + (body?.count ?? 0) }

    func prepare(_ transfer: CurlTransfer, for environment: AppleEnvironment, timeoutMs: Int) throws(CurlError) {
        let url = api.baseURL(for: environment) + path
        let connectTimeoutMs = min(timeoutMs, 5000)
        if let body {
            try transfer.prepare(
                url: url, body: body, caFile: caFile, connectTimeoutMs: connectTimeoutMs, totalTimeoutMs: timeoutMs,
                extraHeaders: [authorization()], method: method)
        } else {
            try transfer.prepareGET(
                url: url, extraHeaders: [authorization()], caFile: caFile, connectTimeoutMs: connectTimeoutMs,
                totalTimeoutMs: timeoutMs)
        }
    }

    func read(_ result: AppleCallResult, retryAfter: Int64?, from environment: AppleEnvironment) -> Sequence.Result {
        reading(result, retryAfter)
    }

    func complete(_ verdict: Sequence.Verdict, sequence: Sequence, stoppedByDeadline: Bool) {
        completion(verdict)
    }
}

extension ServerAPIExchange where Sequence == ServerAPICallSequence {
    /// A request retried as `ServerAPICallSequence` says: Apple's answer with its `Retry-After`, read
    /// against the wall clock when it came.
    convenience init(
        _ method: String = "POST", path: String, body: [UInt8]? = nil, client: AppStoreServerClient,
        completion: @escaping Completion
    ) {
        self.init(method, path: path, body: body, client: client, reading: { result, retryAfter in
            switch result {
            case .answered(let httpStatus, let body):
                return ServerAPICallSequence.Received(
                    .answered(httpStatus: httpStatus, body: body, retryAfterUnixMs: retryAfter),
                    wallClockMs: SystemClock.wallMilliseconds())
            case .transportFailure(let failure):
                return ServerAPICallSequence.Received(
                    .transportFailure(failure), wallClockMs: SystemClock.wallMilliseconds())
            }
        }, completion: completion)
    }
}
