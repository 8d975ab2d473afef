/// What came back from one call to the App Store Server API.
public enum ServerAPICallResult: Equatable, Sendable {
    /// Apple answered: its HTTP status, body, and `Retry-After` (a UNIX time in
    /// milliseconds) when the answer carried one.
    case answered(httpStatus: Int, body: [UInt8], retryAfterUnixMs: Int64?)
    /// No answer arrived.
    case transportFailure(AppleCallResult.TransportFailure)
}

/// How a conversation with the Server API ended.
public enum ServerAPIVerdict: Equatable, Sendable {
    /// 200: Apple's body, from `environment`, not yet read.
    case answered(body: [UInt8], environment: AppleEnvironment)
    /// Neither environment asked knows it (`4040010`, or a 400/404 for an id Apple refuses).
    case notFound
    /// A 4xx other than 401 and 429, to a sequence that `answersRefusals`: Apple's status and body.
    case refused(httpStatus: Int, body: [UInt8])
    /// 401: a bad token or key, a configuration error.
    case unauthorized
    /// Apple unreachable, failing or rate-limiting past the budget.
    case unavailable
}
