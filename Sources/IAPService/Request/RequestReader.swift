import FastCGI
import IAPCore

/// Turns an accepted FastCGI request into an `HTTPRequest`, enforcing the body
/// limit of the contract.
enum RequestReader {
    /// Bodies over 2 MiB are refused with 413 `body_too_large`.
    static let bodyLimit = 2 << 20

    /// The start of a request: enough to log it and answer an error.
    struct Head: Sendable {
        let method: String
        let path: String
        /// nginx's `$request_id`, to match log lines on both sides.
        let requestID: String
    }

    static func head(of exchange: FastCGIExchange) -> Head {
        head(parameter: exchange.parameter)
    }

    /// The head from the FastCGI parameters `parameter` looks up by name.
    static func head(parameter: (String) -> String?) -> Head {
        let method = parameter("REQUEST_METHOD") ?? "GET"
        let uri = parameter("DOCUMENT_URI") ?? parameter("REQUEST_URI") ?? "/"
        let path = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "/"
        let requestID = parameter("REQUEST_ID") ?? "-"
        return Head(method: method, path: path, requestID: requestID)
    }

    /// Reads the body; throws `body_too_large` past the limit, `invalid_field` for
    /// a `CONTENT_LENGTH` that is not a length (nginx never sends one).
    static func read(_ exchange: FastCGIExchange, head: Head) throws(APIError) -> HTTPRequest {
        let declaredLength = try ContentLength.declared(exchange.parameter("CONTENT_LENGTH"), limit: bodyLimit)
        guard let body = exchange.readBody(declaredLength: declaredLength, limit: bodyLimit) else {
            throw APIError.bodyTooLarge
        }
        return HTTPRequest(
            method: head.method, path: head.path, query: exchange.parameter("QUERY_STRING") ?? "",
            body: body, clientAddress: exchange.parameter("REMOTE_ADDR"),
            authorization: exchange.parameter("HTTP_AUTHORIZATION"))
    }
}
