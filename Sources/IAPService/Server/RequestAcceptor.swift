import FastCGI

/// The accept threads: each takes nginx's requests from the listener and routes them, with a
/// database connection of its own for the quick routes. Stopping takes the listener out of the
/// poller; each thread returns once its request is handed on.
final class RequestAcceptor: Worker {
    let threadCount: Int
    private let listener: FastCGIListener
    private let router: Router
    private let inflight: InflightCounter
    private let database: Database

    init(threads: Int, listener: FastCGIListener, router: Router, inflight: InflightCounter, database: Database) {
        threadCount = threads
        self.listener = listener
        self.router = router
        self.inflight = inflight
        self.database = database
    }

    var threadName: String { "accept" }

    func wake() {
        listener.stopAccepting()
    }

    func run(_ stop: StopRequest) {
        let worker = WorkerContext(database: database)
        while let exchange = listener.accept() {
            let head = RequestReader.head(of: exchange)
            let responder = Responder(exchange: exchange, head: head, inflight: inflight)
            do {
                let request = try RequestReader.read(exchange, head: head)
                router.handle(request, responder: responder, worker: worker)
            } catch {
                responder.send(.error(error))
            }
        }
    }
}
