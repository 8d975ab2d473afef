/// Threads that take a queue's jobs until the queue is closed: `consume` is one thread's whole
/// loop (it returns once the queue is closed and what it held is done), and stopping closes the
/// queue. The delivery, recording and batching threads are these.
final class QueueConsumers: Worker {
    let threadName: String
    let threadCount: Int
    private let close: @Sendable () -> Void
    private let consume: @Sendable () -> Void

    init(
        named name: String, threads: Int, close: @escaping @Sendable () -> Void,
        consume: @escaping @Sendable () -> Void
    ) {
        threadName = name
        threadCount = threads
        self.close = close
        self.consume = consume
    }

    func run(_ stop: StopRequest) {
        consume()
    }

    func wake() {
        close()
    }
}
