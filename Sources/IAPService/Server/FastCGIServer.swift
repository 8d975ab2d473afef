import FastCGI

/// A worker whose threads answer a FastCGI listener's requests: each thread,
/// with a database connection of its own, reads the next request and hands it
/// on (`serve`), until stopping takes the listener out of the poller; each
/// thread returns once the request it holds is handed on. A request that
/// cannot be read is answered with its error.
protocol FastCGIServer: Worker {
    var listener: FastCGIListener { get }
    var inflight: InflightCounter { get }
    var database: Database { get }
    /// Answers `request` through `responder`, on `worker`'s connection; `exchange`
    /// holds the rest of what nginx passed (its parameters).
    func serve(_ request: HTTPRequest, exchange: FastCGIExchange, responder: Responder, worker: WorkerContext)
}

extension FastCGIServer {
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
                serve(request, exchange: exchange, responder: responder, worker: worker)
            } catch {
                responder.send(.error(error))
            }
        }
    }
}
