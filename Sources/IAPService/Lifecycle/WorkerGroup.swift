/// The service's workers, started in the order given and stopped in the reverse order, each
/// joined before the one before it is asked to stop: a worker that needs another (the outbox
/// senders need Apple's client) comes after it, so its calls under way end while the other
/// still runs. The one place that owns the order, as swift-service-lifecycle's `ServiceGroup`.
final class WorkerGroup: Sendable {
    private let members: [WorkerThreads]

    init(_ members: [WorkerThreads]) {
        self.members = members
    }

    convenience init(_ workers: [any Worker]) {
        self.init(workers.map(WorkerThreads.init))
    }

    func start() {
        members.forEach { $0.start() }
    }

    func stop() {
        members.reversed().forEach { $0.stop() }
    }
}
