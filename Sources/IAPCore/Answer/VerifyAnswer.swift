/// The answer to `POST /v1/receipts/verify`, in the shape of docs/api.md "The verify answer".
public struct VerifyAnswer: Equatable, Sendable {
    public var status: VerifyStatus
    /// Where Apple found the receipt; nil when Apple was not reached.
    public var environment: AppleEnvironment?
    /// A StoreKit 2 transaction's `environment` as Apple signed it, which the
    /// answer shows instead of `environment` (that one counts `Xcode` and
    /// `LocalTesting` as `Sandbox`, as the rows do); nil for a receipt.
    public var signedEnvironment: SignedTransactionAdmission.Environment?
    /// Apple's last status; nil when Apple was not reached.
    public var appleStatus: Int?
    /// The request's order, or the order the named transaction went to.
    public var orderID: String?
    /// The receipt's app fields; nil when Apple gave no receipt.
    public var app: AppleReceipt?
    public var transactions: [TransactionAnswer]

    public init(
        status: VerifyStatus, environment: AppleEnvironment? = nil, appleStatus: Int? = nil,
        orderID: String? = nil, app: AppleReceipt? = nil, transactions: [TransactionAnswer] = [],
        signedEnvironment: SignedTransactionAdmission.Environment? = nil
    ) {
        self.status = status
        self.environment = environment
        self.signedEnvironment = signedEnvironment
        self.appleStatus = appleStatus
        self.orderID = orderID
        self.app = app
        self.transactions = transactions
    }

    public var httpStatus: Int {
        status.httpStatus
    }

    /// The `Retry-After` header in seconds, nil when the answer has none.
    public var retryAfterSeconds: Int? {
        status.retryAfterSeconds
    }

    /// The body, with every key present (null when unknown), in the contract's order.
    public func json() -> JSONValue {
        .object([
            "status": .string(status.rawValue),
            "code": .int(status.code),
            "finish_transaction": .bool(status.finishTransaction),
            "environment": .optionalString(signedEnvironment?.rawValue ?? environment?.rawValue),
            "apple_status": appleStatus.map { .int($0) } ?? .null,
            "order_id": .optionalString(orderID),
            "app": app.map(Self.appJSON) ?? .null,
            "transactions": .array(transactions.map { $0.json() }),
        ])
    }

    private static func appJSON(_ receipt: AppleReceipt) -> JSONValue {
        .object([
            "bundle_id": .optionalString(receipt.bundleID),
            "application_version": .optionalString(receipt.applicationVersion),
            "app_item_id": receipt.appItemID ?? .null,
        ])
    }
}
