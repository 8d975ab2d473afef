import Glibc
import IAPCore
import Logging
import Synchronization

/// The service's log, through swift-log (the ecosystem's logging API) with a
/// handler of our own (`LineLogHandler`): one line to stderr per event, in
/// one `write` (or a batch's lines in one, `gathered`) so that threads never
/// interleave within a line, as text
/// (the default) or one JSON object per line (`IAP_LOG_FORMAT=json`).
/// Callers pass only what may be logged: never a secret, a password, receipt
/// data or a JWS.
enum Log {
    /// Set once by `bootstrap`, before any thread of the service starts; read by every line after.
    nonisolated(unsafe) private(set) static var format = OperationsConfiguration.LogFormat.text

    /// `source` of the one line per request, which `LineLogHandler` writes in its own shape.
    static let accessSource = "access"

    private static let logger = Logger(label: "iap-fcgi") { _ in LineLogHandler() }

    /// The current second as formatted last: formatting a date cost ~5,700
    /// instructions (callgrind), a tenth of all a version check costs iap-fcgi.
    private static let formattedSecond = Mutex<(second: Int64, text: String)>((-1, ""))

    /// Chooses the format, and makes it every swift-log logger's in this process.
    static func bootstrap(format: OperationsConfiguration.LogFormat) {
        self.format = format
        LoggingSystem.bootstrap { _ in LineLogHandler() }
    }

    /// Runs `body` with the lines this thread logs in it written together at
    /// its end, in one `write` (`GatheredLines`): for a batch of answers.
    static func gathered<Result>(_ body: () throws -> Result) rethrows -> Result {
        try GatheredLines.current.gathering(body)
    }

    /// Something the service did or saw: `iap-fcgi: text` in the text format.
    static func event(_ text: String) {
        logger.info("\(text)")
    }

    /// The line of one answered request. The text format keeps its historical
    /// shape, `time method path status duration id=…`; JSON adds the route and
    /// what the answer said (verify status, Apple's status and environment, error code).
    static func access(
        method: String, path: String, route: String, status: Int, milliseconds: Double, requestID: String,
        outcome: AnswerOutcome
    ) {
        let duration = (milliseconds * 10).rounded() / 10
        guard format == .json else {
            let time = iso8601(ms: SystemClock.wallMilliseconds())
            return logger.info("\(time) \(method) \(path) \(status) \(duration)ms id=\(requestID)", source: accessSource)
        }
        var fields: Logger.Metadata = [
            "request_id": .string(requestID), "method": .string(method), "path": .string(path),
            "route": .string(route), "status": .stringConvertible(status), "duration_ms": .stringConvertible(duration),
        ]
        fields["verify_status"] = outcome.verifyStatus.map { .string($0) }
        fields["apple_status"] = outcome.appleStatus.map { .stringConvertible($0) }
        fields["environment"] = outcome.environment.map { .string($0) }
        fields["error_code"] = outcome.errorCode.map { .string($0) }
        logger.info("request", metadata: fields, source: accessSource)
    }

    /// `2026-11-24T07:00:00Z`, the second of `ms`; with `milliseconds`, `2026-11-24T07:00:00.123Z`.
    static func iso8601(ms: Int64, milliseconds: Bool = false) -> String {
        let second = ms / 1000
        let text = formattedSecond.withLock { cache in
            if cache.second != second {
                cache = (second, AppleDate.iso8601(ms: second * 1000))
            }
            return cache.text
        }
        guard milliseconds else { return text }
        let fraction = String(ms % 1000)
        return text.dropLast() + "." + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }
}
