import Curl
import IAPCore

/// How a request goes to the Play Developer API (`GoogleCallSequence`), run by `AppleClient`'s
/// thread like Apple's calls: the access token from the key's `token_uri` when the shared one is
/// missing or refused, then the call with it. The token is read and cached here, so that every
/// conversation shares it (`GoogleTokenSource`).
final class GoogleExchange: CallExchange {
    typealias Sequence = GoogleCallSequence
    typealias Completion = @Sendable (GoogleCallVerdict) -> Void

    /// The API call: its URL and, for a POST, its JSON body.
    private let url: String
    private let body: [UInt8]?
    private let tokens: GoogleTokenSource
    private let caFile: String?
    private let completion: Completion
    /// The token the last API call carried (a 401 forgets exactly that one).
    private var sentToken = ""

    init(url: String, body: [UInt8]?, tokens: GoogleTokenSource, caFile: String?, completion: @escaping Completion) {
        self.url = url
        self.body = body
        self.tokens = tokens
        self.caFile = caFile
        self.completion = completion
    }

    var admittedBytes: Int { url.utf8.count + (body?.count ?? 0) }
    var endpointLabel: String { "google_play" }

    /// The environment is Apple's notion; Google has one API, and `prepare` picks the URL.
    func environment(of target: GoogleCallTarget) -> AppleEnvironment { .production }

    func prepare(_ transfer: CurlTransfer, for target: GoogleCallTarget, timeoutMs: Int) throws(CurlError) {
        let connectTimeoutMs = min(timeoutMs, 5000)
        if target == .token {
            try transfer.prepare(
                url: tokens.tokenURI, body: tokens.grantBody(), caFile: caFile, connectTimeoutMs: connectTimeoutMs,
                totalTimeoutMs: timeoutMs, extraHeaders: ["Content-Type: application/x-www-form-urlencoded"])
            return
        }
        // A token that expired while this call waited its turn is sent all the same: Google's
        // 401 then gets the one refresh.
        sentToken = tokens.current() ?? sentToken
        let authorization = "Authorization: Bearer " + sentToken
        if let body {
            try transfer.prepare(
                url: url, body: body, caFile: caFile, connectTimeoutMs: connectTimeoutMs, totalTimeoutMs: timeoutMs,
                extraHeaders: [authorization])
        } else {
            try transfer.prepareGET(
                url: url, extraHeaders: [authorization], caFile: caFile, connectTimeoutMs: connectTimeoutMs,
                totalTimeoutMs: timeoutMs)
        }
    }

    /// Caches the token a token request brought; forgets the one the API refused. The client
    /// reads `Retry-After` as a number; Google's is in seconds.
    func read(_ result: AppleCallResult, retryAfter: Int64?, from target: GoogleCallTarget) -> GoogleCallSequence.Result {
        switch result {
        case .answered(200, let body) where target == .token:
            return tokens.store(body) ? .answered(httpStatus: 200, body: body, retryAfterSeconds: retryAfter) : .unreadableToken
        case .answered(let httpStatus, let body):
            if httpStatus == 401 && target == .api {
                tokens.refused(sentToken)
            }
            return .answered(httpStatus: httpStatus, body: body, retryAfterSeconds: retryAfter)
        case .transportFailure(let failure):
            return .transportFailure(failure)
        }
    }

    func complete(_ verdict: GoogleCallVerdict, sequence: GoogleCallSequence, stoppedByDeadline: Bool) {
        completion(verdict)
    }
}
