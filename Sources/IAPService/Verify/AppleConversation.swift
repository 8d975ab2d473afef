import Curl
import IAPCore

/// What a conversation asks `AppleClient` to do next.
enum AppleConversationStep: Equatable {
    /// Send the conversation's request to `environment` after `afterMs` milliseconds.
    case call(AppleEnvironment, afterMs: Int)
    /// It is over: the client calls `complete()`.
    case finished
}

/// One conversation with Apple that `AppleClient` drives on its thread (a
/// receipt's with verifyReceipt, a Server API request's): it prepares each
/// transfer and decides, through its pure call sequence, what follows each
/// result. Every method runs on the client's thread.
protocol AppleConversation: AnyObject {
    /// Counted against the client's waiting limit until the first transfer starts.
    var admittedBytes: Int { get }
    var deadline: Deadline { get }
    func start(atMs now: Int) -> AppleConversationStep
    /// What is left of the conversation's budget at `now`.
    func timeLeftMs(atMs now: Int) -> Int
    /// Sets `transfer` up for a call to `environment` that may take `timeoutMs`.
    func prepare(_ transfer: CurlTransfer, for environment: AppleEnvironment, timeoutMs: Int) throws(CurlError)
    /// The step after a call's result; `retryAfterUnixMs` is the answer's `Retry-After`, if any.
    func next(after result: AppleCallResult, retryAfterUnixMs: Int64?, atMs now: Int) -> AppleConversationStep
    /// Its deadline stops it before Apple settled it: it will end `unavailable`.
    func stopByDeadline()
    /// Hands the outcome to the caller's completion (which must not block).
    func complete()
    /// The `endpoint` label of its calls in the metrics (`AppleConversationEndpoint`).
    var endpointLabel: String { get }
}

/// The `endpoint` labels of calls to Apple.
enum AppleConversationEndpoint {
    static let verifyReceipt = "verify_receipt"
    static let serverAPI = "server_api"
}

extension AppleConversation {
    /// Every conversation but the receipt's is with the App Store Server API.
    var endpointLabel: String { AppleConversationEndpoint.serverAPI }
}

/// A receipt's conversation with verifyReceipt (`AppleCallSequence`).
final class ReceiptConversation: AppleConversation {
    typealias Completion = @Sendable (AppleOutcome) -> Void

    private let body: [UInt8]
    private let endpoints: AppleEndpoints
    private var sequence: AppleCallSequence
    private let completion: Completion
    let deadline: Deadline
    private var verdict: AppleVerdict?
    private var lastAnswer: [UInt8]?
    private var stoppedByDeadline = false

    init(receiptBase64: String, endpoints: AppleEndpoints, deadline: Deadline, completion: @escaping Completion) {
        self.body = endpoints.requestBody(receiptBase64: receiptBase64)
        self.endpoints = endpoints
        self.sequence = AppleCallSequence(policy: endpoints.retryPolicy)
        self.deadline = deadline
        self.completion = completion
    }

    var admittedBytes: Int { body.count }
    var endpointLabel: String { AppleConversationEndpoint.verifyReceipt }

    func start(atMs now: Int) -> AppleConversationStep {
        step(sequence.start(atMs: now))
    }

    func timeLeftMs(atMs now: Int) -> Int {
        sequence.timeLeftMs(atMs: now)
    }

    func prepare(_ transfer: CurlTransfer, for environment: AppleEnvironment, timeoutMs: Int) throws(CurlError) {
        try transfer.prepare(
            url: endpoints.url(for: environment), body: body, caFile: endpoints.caFile,
            connectTimeoutMs: endpoints.connectTimeoutMs(within: timeoutMs), totalTimeoutMs: timeoutMs)
    }

    func next(after result: AppleCallResult, retryAfterUnixMs: Int64?, atMs now: Int) -> AppleConversationStep {
        let environment = sequence.environment
        if case .answered(_, let body) = result {
            lastAnswer = body
        }
        let next = step(sequence.next(after: result, atMs: now))
        if case .answered(200, _) = result {
            ServiceMetrics.appleReceiptStatus(environment: environment, appleStatus: sequence.lastAppleStatus)
        }
        return next
    }

    func stopByDeadline() {
        stoppedByDeadline = true
        verdict = .unavailable(appleStatus: sequence.lastAppleStatus)
    }

    func complete() {
        completion(
            AppleOutcome(
                verdict: verdict ?? .unavailable(appleStatus: sequence.lastAppleStatus), environment: sequence.environment,
                lastAnswer: lastAnswer, stoppedByDeadline: stoppedByDeadline))
    }

    private func step(_ next: AppleNextStep) -> AppleConversationStep {
        switch next {
        case .call(let environment, let afterMs):
            return .call(environment, afterMs: afterMs)
        case .finished(let verdict):
            self.verdict = verdict
            return .finished
        }
    }
}

/// How a receipt's conversation with Apple ended.
struct AppleOutcome: Sendable {
    let verdict: AppleVerdict
    /// The environment asked last.
    let environment: AppleEnvironment
    /// Apple's last answer as received, for the audit row.
    let lastAnswer: [UInt8]?
    /// The verification's deadline ended the sequence before Apple settled it:
    /// nothing is recorded, the request is answered `retry_later`.
    var stoppedByDeadline = false
    /// Checked by this process (`ReceiptChecker`), not by verifyReceipt: nil.
    var checkedHere: CheckedHere? = nil

    /// Apple's status as the answer and the audit row show it: none when the
    /// receipt was checked here (the verdict's status only says what Apple's
    /// would have been).
    func shownStatus(_ appleStatus: Int?) -> Int? {
        checkedHere == nil ? appleStatus : nil
    }
}
