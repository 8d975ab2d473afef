import Curl
import IAPCore

/// A receipt's conversation with verifyReceipt (`AppleCallSequence`), as `AppleClient` runs it.
typealias ReceiptConversation = CallConversation<ReceiptExchange>

extension CallConversation where Exchange == ReceiptExchange {
    typealias Completion = ReceiptExchange.Completion

    convenience init(
        receiptBase64: String, endpoints: AppleEndpoints, deadline: Deadline, completion: @escaping Completion
    ) {
        self.init(
            AppleCallSequence(policy: endpoints.retryPolicy),
            exchange: ReceiptExchange(receiptBase64: receiptBase64, endpoints: endpoints, completion: completion),
            deadline: deadline)
    }
}

/// How a receipt goes to verifyReceipt: its body posted to the environment's URL; Apple's last
/// answer kept for the audit row, each status counted in the metrics.
final class ReceiptExchange: CallExchange {
    typealias Sequence = AppleCallSequence
    typealias Completion = @Sendable (AppleOutcome) -> Void

    private let body: [UInt8]
    private let endpoints: AppleEndpoints
    private let completion: Completion
    private var lastAnswer: [UInt8]?

    init(receiptBase64: String, endpoints: AppleEndpoints, completion: @escaping Completion) {
        self.body = endpoints.requestBody(receiptBase64: receiptBase64)
        self.endpoints = endpoints
        self.completion = completion
    }

    var admittedBytes: Int { body.count }
    var endpointLabel: String { AppleConversationEndpoint.verifyReceipt }

    func prepare(_ transfer: CurlTransfer, for environment: AppleEnvironment, timeoutMs: Int) throws(CurlError) {
        try transfer.prepare(
            url: endpoints.url(for: environment), body: body, caFile: endpoints.caFile,
            connectTimeoutMs: endpoints.connectTimeoutMs(within: timeoutMs), totalTimeoutMs: timeoutMs)
    }

    func read(_ result: AppleCallResult, retryAfter: Int64?, from environment: AppleEnvironment) -> AppleCallResult {
        if case .answered(_, let body) = result {
            lastAnswer = body
        }
        return result
    }

    func noteResult(_ result: AppleCallResult, from environment: AppleEnvironment, sequence: AppleCallSequence) {
        if case .answered(200, _) = result {
            ServiceMetrics.appleReceiptStatus(environment: environment, appleStatus: sequence.lastAppleStatus)
        }
    }

    func complete(_ verdict: AppleVerdict, sequence: AppleCallSequence, stoppedByDeadline: Bool) {
        completion(
            AppleOutcome(
                verdict: verdict, environment: sequence.environment, lastAnswer: lastAnswer,
                stoppedByDeadline: stoppedByDeadline))
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
