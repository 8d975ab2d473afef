import FastCGI

/// The accept threads: each takes nginx's requests from the listener and routes them, with a
/// database connection of its own for the quick routes (`FastCGIServer`).
final class RequestAcceptor: FastCGIServer {
    let threadCount: Int
    let listener: FastCGIListener
    private let router: Router
    let inflight: InflightCounter
    let database: Database

    init(threads: Int, listener: FastCGIListener, router: Router, inflight: InflightCounter, database: Database) {
        threadCount = threads
        self.listener = listener
        self.router = router
        self.inflight = inflight
        self.database = database
    }

    var threadName: String { "accept" }

    func serve(_ request: HTTPRequest, exchange: FastCGIExchange, responder: Responder, worker: WorkerContext) {
        router.handle(request, responder: responder, worker: worker)
    }
}
