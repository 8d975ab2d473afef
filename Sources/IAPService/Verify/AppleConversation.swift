import Curl
import IAPCore

/// What a conversation asks `AppleClient` to do next.
enum AppleConversationStep: Equatable {
    /// Send the conversation's request to `environment` after `afterMs` milliseconds.
    case call(AppleEnvironment, afterMs: Int)
    /// It is over: the client calls `complete()`.
    case finished
}

/// One conversation with a store that `AppleClient` drives on its thread (a
/// receipt's with verifyReceipt, a Server API request's, Google's): it prepares each
/// transfer and decides, through its pure call sequence, what follows each
/// result (`CallConversation`). Every method runs on the client's thread.
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
    /// Its deadline stops it before the store settled it: it ends as a stopped sequence does (`unavailable`, no answer).
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
