import IAPCore

/// An answer before it is written: status, headers and a JSON body.
struct Response: Sendable {
    let status: Int
    let headers: [(String, String)]
    let body: [UInt8]
    /// What the request's log line says of the answer beyond its status.
    var outcome = AnswerOutcome()

    static func json(_ status: Int, _ value: JSONValue, retryAfterSeconds: Int? = nil) -> Response {
        var headers = [("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-store")]
        if let retryAfterSeconds {
            headers.append(("Retry-After", String(retryAfterSeconds)))
        }
        return Response(status: status, headers: headers, body: value.serialized())
    }

    /// The one error shape of the contract: `{"error": {"code", "message"}}`.
    static func error(_ error: APIError) -> Response {
        let body: JSONValue = .object(["error": .object(["code": .string(error.code), "message": .string(error.message)])])
        var response = json(error.httpStatus, body, retryAfterSeconds: error.httpStatus == 503 ? 5 : nil)
        response.outcome.errorCode = error.code
        return response
    }

    static func verify(_ answer: VerifyAnswer) -> Response {
        var response = json(answer.httpStatus, answer.json(), retryAfterSeconds: answer.retryAfterSeconds)
        response.outcome = AnswerOutcome(
            verifyStatus: answer.status.rawValue, appleStatus: answer.appleStatus, environment: answer.environment?.rawValue)
        return response
    }

    /// The reason phrase of the `Status:` header.
    var reason: String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 303: return "See Other"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 409: return "Conflict"
        case 413: return "Content Too Large"
        case 422: return "Unprocessable Content"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }
}

/// The fields of an answer its log line carries: never a receipt, a JWS or a secret.
struct AnswerOutcome: Sendable {
    /// A verify answer's `status`.
    var verifyStatus: String?
    var appleStatus: Int?
    var environment: String?
    /// An error answer's `error.code`.
    var errorCode: String?
}
