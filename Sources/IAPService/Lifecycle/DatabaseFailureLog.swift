/// A worker's database outage in the log: its first error and its end, not each failed retry.
struct DatabaseFailureLog {
    /// The log lines' prefix, the worker's name ("webhook", "finish").
    let worker: String
    /// How long the worker waits before trying again.
    let retry: Duration
    private var failing = false

    init(worker: String, retry: Duration) {
        self.worker = worker
        self.retry = retry
    }

    /// The last database round: `error` when it failed, nil when it worked.
    mutating func note(_ error: (any Error)?) {
        if let error, !failing {
            Log.event("\(worker): database error, retrying every \(retry.milliseconds) ms: \(error)")
        } else if error == nil && failing {
            Log.event("\(worker): database reachable again")
        }
        failing = error != nil
    }
}
