import FastCGI
import IAPCore

/// Answers one request, from whichever thread has the answer, counts it in the
/// metrics and writes its log line: time, method, path, status, duration,
/// request id (and in JSON what the answer said, `AnswerOutcome`). Nothing
/// else of the request reaches the log.
final class Responder: @unchecked Sendable {
    private let exchange: FastCGIExchange
    private let head: RequestReader.Head
    /// When the request was accepted (monotonic): verification deadlines run from it.
    let receivedAtNs = SystemClock.monotonicNanoseconds()
    private let inflight: InflightCounter

    init(exchange: FastCGIExchange, head: RequestReader.Head, inflight: InflightCounter) {
        self.exchange = exchange
        self.head = head
        self.inflight = inflight
        inflight.begin()
    }

    func send(_ response: Response) {
        var headers = response.headers
        if head.requestID != "-" {
            headers.append(("X-Request-Id", head.requestID))
        }
        exchange.respond(status: response.status, reason: response.reason, headers: headers, body: response.body)
        let nanoseconds = SystemClock.monotonicNanoseconds() - receivedAtNs
        let route = Route.allCases.first { $0.path == head.path }
        ServiceMetrics.requestAnswered(route: route, status: response.status, nanoseconds: nanoseconds)
        Log.access(
            method: head.method, path: head.path, route: route?.path ?? ServiceMetrics.otherRoute, status: response.status,
            milliseconds: Double(nanoseconds) / 1_000_000, requestID: head.requestID, outcome: response.outcome)
        inflight.end()
    }
}
