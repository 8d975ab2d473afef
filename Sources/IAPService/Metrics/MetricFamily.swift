import Metrics
import Synchronization

/// The metrics of one name, one per set of label values, each made on first
/// use and kept: swift-metrics makes a metric through its factory's registry
/// (locks and lookups), which the hot paths should not pay on every event.
final class MetricFamily<Key: Hashable & Sendable, Metric>: @unchecked Sendable {
    private let members = Mutex<[Key: Metric]>([:])
    private let make: @Sendable (Key) -> Metric

    init(_ make: @escaping @Sendable (Key) -> Metric) {
        self.make = make
    }

    subscript(key: Key) -> Metric {
        members.withLock { members in
            if let known = members[key] { return known }
            let made = make(key)
            members[key] = made
            return made
        }
    }
}

/// Families whose key is the label values, in the order of `labels`.
extension MetricFamily where Key == [String], Metric == Counter {
    static func counters(_ label: String, labels: [String]) -> MetricFamily {
        MetricFamily { Counter(label: label, dimensions: Array(zip(labels, $0))) }
    }
}

/// Histograms (`Recorder` with `aggregate`), whose buckets `MetricsEndpoint` sets.
extension MetricFamily where Key == [String], Metric == Recorder {
    static func histograms(_ label: String, labels: [String]) -> MetricFamily {
        MetricFamily { Recorder(label: label, dimensions: Array(zip(labels, $0)), aggregate: true) }
    }
}

extension MetricFamily where Key == [String], Metric == Gauge {
    static func gauges(_ label: String, labels: [String]) -> MetricFamily {
        MetricFamily { Gauge(label: label, dimensions: Array(zip(labels, $0))) }
    }
}
