import FastCGI
import IAPCore

/// Answers one request, from whichever thread has the answer, and writes its
/// log line: time, method, path, status, duration, request id. Nothing else of
/// the request reaches the log.
final class Responder: @unchecked Sendable {
    private let exchange: FastCGIExchange
    private let head: RequestReader.Head
    /// When the request was accepted (monotonic): verification deadlines run from it.
    let receivedAtNs = Clock.monotonicNanoseconds()
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
        let milliseconds = Double(Clock.monotonicNanoseconds() - receivedAtNs) / 1_000_000
        let duration = (milliseconds * 10).rounded() / 10
        Log.line(
            "\(AppleDate.iso8601(ms: Clock.wallMilliseconds())) \(head.method) \(head.path) \(response.status) \(duration)ms id=\(head.requestID)"
        )
        inflight.end()
    }
}
