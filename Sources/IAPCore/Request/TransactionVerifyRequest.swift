/// The body of `POST /v1/transactions/verify`: a StoreKit 2 signed transaction
/// `{"signed_transaction": "<JWS>", "order_id": "<uuid>", "user_id": "u-1001", "app_version": "1.3.0"}`,
/// or `{"transaction_id": "2000000123456789", "user_id": "u-1001"}` for the
/// service to fetch it from the App Store Server API.
public struct TransactionVerifyRequest: Equatable, Sendable {
    /// What the request verifies.
    public enum Subject: Equatable, Sendable {
        /// The JWS as posted (`Transaction.jwsRepresentation`).
        case signedTransaction(String)
        /// A transaction id, as decimal digits, to look up with Apple.
        case transactionID(String)
    }

    public let subject: Subject
    /// The order the client made before paying, as a lowercase UUID.
    public let orderID: String?
    /// The user the goods go to when no order names one.
    public let userID: String?
    /// The app's marketing version as the client knows it (for the review switch).
    public let appVersion: String?

    public init(subject: Subject, orderID: String? = nil, userID: String? = nil, appVersion: String? = nil) {
        self.subject = subject
        self.orderID = orderID
        self.userID = userID
        self.appVersion = appVersion
    }

    /// The longest `signed_transaction` taken, in characters. Apple's weigh
    /// about 4 KiB (three certificates and a payload); a limit against abuse,
    /// well under the 2 MiB body rule.
    public static let maxSignedTransactionCharacters = 16 * 1024

    /// Reads a request body. Errors are the contract's 400s: `invalid_json`,
    /// `missing_field` and `invalid_field`, each naming the field. `null` counts
    /// as absent; unknown keys are ignored. The JWS is only checked for its
    /// type, length and characters here: whether Apple signed it is
    /// `SignedDataVerifier`'s part (400 `invalid_signed_data`, with an audit row).
    public static func parse(body: [UInt8]) throws(APIError) -> TransactionVerifyRequest {
        let fields = try RequestBody(body)
        let buyer = try BuyerFields(fields)
        let subject: Subject
        if let jws = try fields.optionalString(
            "signed_transaction",
            "must be a compact JWS of 1 to \(maxSignedTransactionCharacters) printable ASCII characters",
            where: isCompactJWSText)
        {
            subject = .signedTransaction(jws)
        } else if let transactionID = try VerifyRequest.readTransactionID(fields) {
            guard buyer.userID != nil || buyer.orderID != nil else {
                throw APIError.missingField("user_id", "is required with transaction_id when order_id is absent")
            }
            subject = .transactionID(transactionID)
        } else {
            throw APIError.missingField("signed_transaction", "or transaction_id is required")
        }
        return TransactionVerifyRequest(
            subject: subject, orderID: buyer.orderID, userID: buyer.userID, appVersion: buyer.appVersion)
    }

    /// 1 to `maxSignedTransactionCharacters` printable ASCII characters, no
    /// space: what the audit row can store as posted. Whether they make a JWS
    /// (three parts of base64url) is the verifier's check, so that a bad one
    /// is `invalid_signed_data` with its audit row.
    static func isCompactJWSText(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard (1...maxSignedTransactionCharacters).contains(utf8.count) else { return false }
        // Over the contiguous bytes when the string has them (it does, fresh from the parser): the
        // generic `allSatisfy` over a UTF8View cost 2.4% of iap-fcgi's CPU on the bench's case s2.
        return utf8.withContiguousStorageIfAvailable { bytes in bytes.allSatisfy { $0 &- 0x21 < 0x5E } }
            ?? utf8.allSatisfy { $0 &- 0x21 < 0x5E }
    }
}
