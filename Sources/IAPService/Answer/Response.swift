import IAPCore

/// An answer before it is written: status, headers and a JSON body.
struct Response: Sendable {
    let status: Int
    let headers: [(String, String)]
    let body: [UInt8]

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
        return json(error.httpStatus, body, retryAfterSeconds: error.httpStatus == 503 ? 5 : nil)
    }

    static func verify(_ answer: VerifyAnswer) -> Response {
        json(answer.httpStatus, answer.json(), retryAfterSeconds: answer.retryAfterSeconds)
    }

    /// The reason phrase of the `Status:` header.
    var reason: String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 400: return "Bad Request"
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
