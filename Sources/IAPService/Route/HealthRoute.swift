import IAPCore

/// GET /v1/health: up, and whether the database answers.
struct HealthRoute: Sendable {
    func handle(worker: WorkerContext) -> Response {
        do {
            try worker.connection.execute("SELECT 1")
            return .json(200, .object(["status": .string("ok"), "database": .string("ok")]))
        } catch {
            return .json(503, .object(["status": .string("degraded"), "database": .string("down")]),
                         retryAfterSeconds: 5)
        }
    }
}
