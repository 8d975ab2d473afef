import Synchronization

/// Values read when Prometheus scrapes rather than on every change (queue
/// depths, days until a certificate expires): the hot paths pay nothing for them.
enum Scrape {
    private static let samplers = Mutex<[@Sendable () -> Void]>([])

    /// Runs `sample` before every scrape; it sets its gauges.
    static func watch(_ sample: @escaping @Sendable () -> Void) {
        samplers.withLock { $0.append(sample) }
    }

    /// Runs every sampler (on the metrics thread, before the exposition is written).
    static func sampleAll() {
        for sample in samplers.withLock({ $0 }) {
            sample()
        }
    }
}
