/// An error answer of the contract: an HTTP status and a stable machine `code`.
/// The `message` is for people and never carries SQL, a stack, a secret or
/// receipt data.
public struct APIError: Error, Equatable, Sendable {
    public let httpStatus: Int
    public let code: String
    public let message: String

    public init(httpStatus: Int, code: String, message: String) {
        self.httpStatus = httpStatus
        self.code = code
        self.message = message
    }

    public static func invalidJSON(_ message: String) -> APIError {
        APIError(httpStatus: 400, code: "invalid_json", message: message)
    }

    public static func missingField(_ name: String, _ detail: String = "is required") -> APIError {
        APIError(httpStatus: 400, code: "missing_field", message: "\(name) \(detail)")
    }

    public static func invalidField(_ name: String, _ detail: String) -> APIError {
        APIError(httpStatus: 400, code: "invalid_field", message: "\(name) \(detail)")
    }

    public static let invalidReceiptData = APIError(
        httpStatus: 400, code: "invalid_receipt_data", message: "receipt_data is not base64")
    public static let invalidSignedData = APIError(
        httpStatus: 400, code: "invalid_signed_data", message: "signed_transaction is not a transaction signed by Apple")
    /// A notification whose JWS (outer or inner) does not verify, or that is for another app.
    public static let invalidNotification = APIError(
        httpStatus: 400, code: "invalid_signed_data",
        message: "signedPayload is not a notification signed by Apple for this app")
    /// A `transaction_id`-only verify needs the App Store Server API, which is not configured. A
    /// 400, not a 5xx: no retry of the same request can succeed, and the client can post the JWS.
    public static let serverAPINotConfigured = APIError(
        httpStatus: 400, code: "server_api_not_configured",
        message: "transaction_id alone needs the App Store Server API, which is not configured; post signed_transaction")
    /// A bare `transaction_id` whose transaction no `appAccountToken` ties to
    /// the request's user (`TransactionIDProof`): an id is not a secret.
    public static let proofRequired = APIError(
        httpStatus: 403, code: "proof_required",
        message: "a transaction_id alone does not show the purchase is yours; post the signed transaction or the receipt")
    public static let unknownOrder = APIError(httpStatus: 404, code: "unknown_order", message: "no such order")
    public static let unknownProduct = APIError(
        httpStatus: 404, code: "unknown_product", message: "no such active product")
    public static let orderUserMismatch = APIError(
        httpStatus: 409, code: "order_user_mismatch", message: "the order belongs to another user")
    public static let priceMismatch = APIError(
        httpStatus: 422, code: "price_mismatch", message: "price differs from the catalog price")
    public static let bodyTooLarge = APIError(
        httpStatus: 413, code: "body_too_large", message: "request body is over 2 MiB")
    public static let notFound = APIError(httpStatus: 404, code: "not_found", message: "no such route")
    public static let methodNotAllowed = APIError(
        httpStatus: 405, code: "method_not_allowed", message: "method not allowed on this route")
    public static let databaseUnavailable = APIError(
        httpStatus: 503, code: "database_unavailable", message: "the database is unavailable; retry later")
    public static let internalError = APIError(
        httpStatus: 500, code: "internal_error", message: "internal error")
}
