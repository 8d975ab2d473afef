/// An answer of verifyReceipt, typed, with the object Apple sent kept in `raw`
/// (it is what the `receipts.apple_response` column stores).
public struct AppleReply: Equatable, Sendable {
    /// `status`: a number in Apple's JSON; a string of digits is read too.
    public let status: Int
    /// `environment` ("Production" or "Sandbox"); iOS 6 answers have none.
    public let environment: String?
    /// `is-retryable` or `is_retryable` (both spellings occur): true, "true" or "1".
    public let isRetryable: Bool
    /// `receipt`, absent from most error answers.
    public let receipt: AppleReceipt?
    /// `latest_receipt_info`: an array for app receipts, a single object for
    /// iOS 6 subscriptions; empty when absent.
    public let latestReceiptInfo: [AppleTransaction]
    /// The object as Apple sent it.
    public let raw: JSONObject

    public init(
        status: Int, environment: String? = nil, isRetryable: Bool = false, receipt: AppleReceipt? = nil,
        latestReceiptInfo: [AppleTransaction] = [], raw: JSONObject = JSONObject()
    ) {
        self.status = status
        self.environment = environment
        self.isRetryable = isRetryable
        self.receipt = receipt
        self.latestReceiptInfo = latestReceiptInfo
        self.raw = raw
    }

    public var appleStatus: AppleStatus {
        AppleStatus(status)
    }

    public static func parse(_ json: JSONValue) throws(AppleReplyError) -> AppleReply {
        guard let object = json.objectValue else { throw .notAnObject }
        guard let statusValue = object["status"], !statusValue.isNull else {
            throw AppleReplyError(.missingField, field: "status")
        }
        guard let status = AppleScalar.int(statusValue) else {
            throw AppleReplyError(.invalidField, field: "status")
        }

        var receipt: AppleReceipt?
        switch object["receipt"] {
        case nil, .null?: receipt = nil
        case .object(let receiptObject)?: receipt = try AppleReceipt.parse(receiptObject)
        default: throw AppleReplyError(.invalidField, field: "receipt")
        }

        let latest: [AppleTransaction]
        switch object["latest_receipt_info"] {
        case nil, .null?: latest = []
        case .array(let entries)?: latest = try AppleTransaction.parseList(entries, at: "latest_receipt_info")
        case .object(let single)?:
            latest = try AppleTransaction.parseList([.object(single)], at: "latest_receipt_info")
        default: throw AppleReplyError(.invalidField, field: "latest_receipt_info")
        }

        return AppleReply(
            status: status,
            environment: AppleScalar.text(object["environment"]),
            isRetryable: AppleScalar.flag(object["is-retryable"]) || AppleScalar.flag(object["is_retryable"]),
            receipt: receipt,
            latestReceiptInfo: latest,
            raw: object)
    }
}
