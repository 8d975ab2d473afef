import Curl
import IAPCore

/// One request to the Play Developer API (`GoogleCallSequence`), run by
/// `AppleClient`'s thread like Apple's calls: the access token first when the
/// shared one is missing or refused, then the call, retried as the sequence says.
final class GoogleConversation: AppleConversation {
    typealias Completion = @Sendable (GoogleCallVerdict) -> Void

    /// The API call: its URL and, for a POST, its JSON body.
    private let url: String
    private let body: [UInt8]?
    private let tokens: GoogleTokenSource
    private let caFile: String?
    private var sequence: GoogleCallSequence
    private let completion: Completion
    let deadline: Deadline
    private var verdict = GoogleCallVerdict.unavailable
    /// The token the last API call carried (a 401 forgets exactly that one).
    private var sentToken = ""

    init(
        url: String, body: [UInt8]?, tokens: GoogleTokenSource, caFile: String?, policy: AppleRetryPolicy,
        deadline: Deadline, completion: @escaping Completion
    ) {
        self.url = url
        self.body = body
        self.tokens = tokens
        self.caFile = caFile
        self.sequence = GoogleCallSequence(policy: policy)
        self.deadline = deadline
        self.completion = completion
    }

    var admittedBytes: Int { url.utf8.count + (body?.count ?? 0) }
    var endpointLabel: String { "google_play" }

    func start(atMs now: Int) -> AppleConversationStep {
        step(sequence.start(atMs: now, hasToken: tokens.current() != nil))
    }

    func timeLeftMs(atMs now: Int) -> Int {
        sequence.timeLeftMs(atMs: now)
    }

    func prepare(_ transfer: CurlTransfer, for environment: AppleEnvironment, timeoutMs: Int) throws(CurlError) {
        let connectTimeoutMs = min(timeoutMs, 5000)
        if sequence.askingToken {
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

    func next(after result: AppleCallResult, retryAfterUnixMs: Int64?, atMs now: Int) -> AppleConversationStep {
        // The client reads `Retry-After` as a number; Google's is in seconds.
        let googleResult: GoogleCallSequence.Result
        switch result {
        case .answered(let httpStatus, let body):
            googleResult = .answered(httpStatus: httpStatus, body: body, retryAfterSeconds: retryAfterUnixMs)
        case .transportFailure(let failure):
            googleResult = .transportFailure(failure)
        }
        if sequence.askingToken {
            var stored = false
            if case .answered(200, let body, _) = googleResult {
                stored = tokens.store(body)
            }
            return step(sequence.next(afterToken: googleResult, tokenStored: stored, atMs: now))
        }
        if case .answered(401, _, _) = googleResult {
            tokens.refused(sentToken)
        }
        return step(sequence.next(afterCall: googleResult, atMs: now))
    }

    func stopByDeadline() {
        verdict = .unavailable
    }

    func complete() {
        completion(verdict)
    }

    private func step(_ next: GoogleCallSequence.Step) -> AppleConversationStep {
        switch next {
        case .fetchToken(let afterMs), .call(let afterMs):
            // The environment is Apple's notion; Google has one API, and `prepare` picks the URL.
            return .call(.production, afterMs: afterMs)
        case .finished(let verdict):
            self.verdict = verdict
            return .finished
        }
    }
}
