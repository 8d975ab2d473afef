import Dispatch
import IAPCore
import MariaDB

/// The store-specific half of a finish outbox (`transaction_finishes` for Apple, `google_finishes`
/// for Google): its table's statements, its call to the store, and what it records of the answer.
/// `FinishOutboxWorker` runs the rounds they share.
protocol FinishChannel: Sendable {
    associatedtype Store: FinishOutboxStore
    /// What one call came to; `unsent` for a call the store's client refused to queue.
    associatedtype Outcome: Sendable

    /// The log lines' prefix ("finish").
    var name: String { get }
    var threadName: String { get }
    /// Logged when the worker starts; nil: nothing.
    var startMessage: String? { get }
    /// Who is called, for the log ("Apple").
    var storeName: String { get }
    var unsent: Outcome { get }
    /// A claimed row is no other worker's for this long: its call's wait and timeout, with room for
    /// the database calls around them. A lease must never end while its call may still be under way.
    var leaseMs: Int64 { get }

    /// The gauges read from the table every `FinishOutboxWorker.backlogInterval`.
    func reportBacklog(_ store: Store, now: Timestamp) throws
    /// Starts `row`'s call; `completion` runs once on the client's thread. False when it was not queued.
    func call(_ row: Store.Claimed, completion: @escaping @Sendable (Outcome) -> Void) -> Bool
    /// Counts `outcome` in the metrics and returns its error (nil: the store took it).
    func count(_ row: Store.Claimed, _ outcome: Outcome) -> String?
    /// Records `outcome` in `store`'s open database transaction. False when the row no longer held its lease.
    func record(_ row: Store.Claimed, _ outcome: Outcome, at now: Timestamp, _ store: Store) throws -> Bool
    /// How a row is named in the log.
    func describe(_ row: Store.Claimed) -> String
}

/// A finish outbox's statements under the leases every outbox shares (`LeasedOutbox`).
protocol FinishOutboxStore {
    associatedtype Claimed: Sendable
    init(connection: MariaDBConnection)
    func transaction<Result>(_ body: () throws -> Result) throws -> Result
    func lease(upTo limit: Int, now: Timestamp, until lease: String) throws(MariaDBError) -> [Claimed]
}

/// Works through a finish outbox on a thread of its own with its own database connection, never on
/// a request's path. One round: lease up to `batch` due rows (a lease per row, so several instances
/// on one database never call twice for one row), make their calls at once, wait for them, record
/// each result in a database transaction of its own. When nothing is due, it looks every
/// `idlePoll`, or sooner when `WorkerThreads.nudge` says a delivery wrote a row.
final class FinishOutboxWorker<Channel: FinishChannel>: Worker, @unchecked Sendable {
    /// Calls made at once: few, so that finishes never crowd out the verifications' calls.
    static var batch: Int { 4 }
    static var idlePoll: Duration { .milliseconds(250) }
    /// After a database error, the next round waits this long.
    static var databaseRetry: Duration { .seconds(1) }
    static var backlogInterval: Duration { .seconds(5) }

    let channel: Channel
    private let database: Database
    // The rest belongs to the worker's thread.
    /// Calls without success in a row: the first of a run and the recovery are logged, not each.
    private var failuresInARow = 0
    private var databaseLog: DatabaseFailureLog

    init(_ channel: Channel, database: Database) {
        self.channel = channel
        self.database = database
        databaseLog = DatabaseFailureLog(worker: channel.name, retry: Self.databaseRetry)
    }

    var threadName: String { channel.threadName }

    /// Claims nothing more once stopped, lets the calls under way end and records them, then returns.
    func run(_ stop: StopRequest) {
        if let message = channel.startMessage { Log.event(message) }
        let store = Channel.Store(connection: database.connection())
        var nextBacklogMs: Int64 = 0
        while !stop.isRequested {
            let now = Timestamp.now()
            let claimed: [Channel.Store.Claimed]
            do {
                let lease = AppleDate.sqlDateTime(ms: now.milliseconds + channel.leaseMs)
                claimed = try store.transaction { try store.lease(upTo: Self.batch, now: now, until: lease) }
                if now.milliseconds >= nextBacklogMs {
                    try channel.reportBacklog(store, now: now)
                    nextBacklogMs = now.milliseconds + Self.backlogInterval.milliseconds
                }
                databaseLog.note(nil)
            } catch {
                databaseLog.note(error)
                stop.sleep(for: Self.databaseRetry)
                continue
            }
            guard !claimed.isEmpty else {
                stop.sleep(for: Self.idlePoll)
                continue
            }
            record(Array(zip(claimed, call(claimed))), store)
        }
    }

    /// Makes the claimed rows' calls at once and waits for them all (this thread is the worker's own).
    private func call(_ claimed: [Channel.Store.Claimed]) -> [Channel.Outcome] {
        let outcomes = Locked([Channel.Outcome](repeating: channel.unsent, count: claimed.count))
        let answered = DispatchGroup()
        for (index, row) in claimed.enumerated() {
            answered.enter()
            let submitted = channel.call(row) { outcome in
                outcomes.withLock { $0[index] = outcome }
                answered.leave()
            }
            if !submitted { answered.leave() }  // stays `unsent`
        }
        answered.wait()
        return outcomes.withLock { $0 }
    }

    /// Records the round's results in one database transaction (one commit for them all); when
    /// that fails, nothing of it stays and each is recorded in a database transaction of its own,
    /// so that one lost write costs no other row its result. One not recorded waits for its lease
    /// to end and is called again.
    private func record(_ results: [(Channel.Store.Claimed, Channel.Outcome)], _ store: Channel.Store) {
        let now = Timestamp.now()
        for (row, outcome) in results { noteCall(row, error: channel.count(row, outcome)) }
        if results.count > 1, let held = try? store.transaction({
            try results.map { row, outcome in try channel.record(row, outcome, at: now, store) }
        }) {
            for ((row, _), held) in zip(results, held) where !held { noteLeaseEnded(row) }
            return
        }
        for (row, outcome) in results {
            do {
                let held = try store.transaction { try channel.record(row, outcome, at: now, store) }
                if !held { noteLeaseEnded(row) }
            } catch {
                Log.event("\(channel.name): \(channel.describe(row)): result not recorded (\(error)); called again when its lease ends")
            }
        }
    }

    private func noteLeaseEnded(_ row: Channel.Store.Claimed) {
        Log.event("\(channel.name): \(channel.describe(row)): its lease ended before its result was recorded")
    }

    private func noteCall(_ row: Channel.Store.Claimed, error: String?) {
        if let error {
            failuresInARow += 1
            if failuresInARow == 1 {
                Log.event("\(channel.name): \(channel.describe(row)) not finished (\(error)); retrying with backoff")
            }
        } else {
            if failuresInARow > 0 {
                Log.event("\(channel.name): \(channel.storeName) takes finishes again after \(failuresInARow) failures")
            }
            failuresInARow = 0
        }
    }
}
