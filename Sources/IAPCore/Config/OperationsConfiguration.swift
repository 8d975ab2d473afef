/// How iap-fcgi lets operators watch it: the metrics listener and the log format.
public struct OperationsConfiguration: Equatable, Sendable {
    /// How each log line is written (`IAP_LOG_FORMAT`).
    public enum LogFormat: String, CaseIterable, Sendable {
        /// `time method path status duration id=…`, and `iap-fcgi: …` for events: the default.
        case text
        /// One JSON object per line, for log pipelines that query fields.
        case json
    }

    /// `IAP_METRICS_LISTEN`: `host:port` of the Prometheus listener, e.g.
    /// `127.0.0.1:9464`. Nil (unset): no listener. TCP only, and never behind
    /// nginx's public server block.
    public var metricsListen: ListenAddress?
    /// `IAP_LOG_FORMAT`: `text` (default) or `json`.
    public var logFormat: LogFormat

    public init(metricsListen: ListenAddress? = nil, logFormat: LogFormat = .text) {
        self.metricsListen = metricsListen
        self.logFormat = logFormat
    }

    /// Reads `IAP_METRICS_LISTEN` and `IAP_LOG_FORMAT`.
    /// - Throws: the bad variable, named.
    public static func fromEnvironment(_ env: [String: String]) throws(ConfigurationError) -> OperationsConfiguration {
        let reader = EnvironmentReader(env)
        var configuration = OperationsConfiguration()
        if let text = reader["IAP_METRICS_LISTEN"] {
            guard let address = ListenAddress(text), case .tcp = address else {
                throw .invalid(
                    "IAP_METRICS_LISTEN", "must be host:port (e.g. 127.0.0.1:9464), where Prometheus scrapes /metrics",
                    got: text)
            }
            configuration.metricsListen = address
        }
        if let text = reader["IAP_LOG_FORMAT"] {
            guard let format = LogFormat(rawValue: text) else {
                throw .invalid(
                    "IAP_LOG_FORMAT", "must be one of " + LogFormat.allCases.map(\.rawValue).joined(separator: ", "),
                    got: text)
            }
            configuration.logFormat = format
        }
        return configuration
    }
}
