import IAPCore
import MariaDB

/// `iapctl retry-pending`: finishes the verifications that never completed
/// (Apple down or slow, the database down, the process killed), so that a
/// purchase whose app never comes back is still delivered.
///
/// Safe to run from cron while the service runs: delivery is exactly-once by
/// the database whatever runs it, a run skips receipts younger than
/// `minimumAge` (a request may still be on them), and two runs never overlap
/// (a named database lock).
///
/// A run cannot stall on receipts Apple never settles: each row counts its
/// attempts and waits out a backoff before the next (`PendingRetryPolicy`),
/// and is given up in the end, so the rows a run takes are the ones due. Rows
/// with the same bytes (an app retrying during an outage) go to Apple once,
/// and rows whose bytes completed in another row are closed without Apple.
public final class PendingReceipts {
    /// What one run did: the receipts it asked Apple about and their answers by
    /// status, the rows it closed as superseded, and the rows it gave up on.
    public struct Summary: CustomStringConvertible, Sendable {
        public var examined = 0
        public var statuses: [String: Int] = [:]
        /// (row, the completed row of the same bytes).
        public var superseded: [(receiptID: UInt64, by: UInt64)] = []
        public var givenUp: [(receiptID: UInt64, attempts: Int, reason: String)] = []

        public var description: String {
            let counts = statuses.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            var lines = ["retried \(examined) receipt(s)" + (counts.isEmpty ? "" : ": \(counts)")]
            if !superseded.isEmpty {
                let listed = superseded.prefix(Self.supersededListed).map { "\($0.receiptID) (by \($0.by))" }
                lines.append(
                    "closed \(superseded.count) receipt(s) whose bytes completed in another row: "
                        + listed.joined(separator: ", ") + Self.more(superseded.count - listed.count))
            }
            if !givenUp.isEmpty {
                lines.append("gave up on \(givenUp.count) receipt(s):")
                lines += givenUp.prefix(Self.givenUpListed).map {
                    "  receipt \($0.receiptID) after \($0.attempts) attempt(s): \($0.reason)"
                }
                if givenUp.count > Self.givenUpListed {
                    lines.append(
                        "  and \(givenUp.count - Self.givenUpListed) more: "
                            + "SELECT receipt_id, retry_final_reason FROM receipts WHERE retry_final_state = 'gave_up'")
                }
            }
            return lines.joined(separator: "\n")
        }

        /// Superseded rows need no one's attention: a few are named, as examples.
        static let supersededListed = 20
        /// Receipts given up on are each worth a look, but a run after a long
        /// outage must still print a readable report.
        static let givenUpListed = 100

        private static func more(_ count: Int) -> String {
            count > 0 ? " and \(count) more" : ""
        }
    }

    /// Calls to Apple a run makes at once.
    static let batchSize = 16
    /// How long the run's lock outlives its last renewal (once per batch, and a
    /// batch is bounded by Apple's budget): a run that died frees it after this.
    static let lockLeaseSeconds = 300

    /// The rows a run still has to finish, of `receipts r`
    /// (`UnverifiedReceipts.stillToFinish`): the backlog that
    /// `iap_retry_pending_receipts` and `iapctl status` count, by the same text
    /// as the runs take them, so that neither counts a row no run will take.
    public static let backlogCondition = UnverifiedReceipts.stillToFinish

    private let configuration: ServiceConfiguration

    public init(configuration: ServiceConfiguration) {
        self.configuration = configuration
    }

    /// Retries up to `limit` due receipts received at least `minimumAgeSeconds`
    /// ago. Returns nil when another run holds the lock.
    public func retry(minimumAgeSeconds: Int, limit: Int, policy: PendingRetryPolicy) throws -> Summary? {
        MariaDBConnection.initialiseLibrary()
        let connection = Database(configuration: configuration.database).connection()
        // Runs on two machines (two Galera nodes) must not ask Apple twice about one receipt.
        let lock = ClusterLock(connection: connection, name: "retry_pending", leaseSeconds: Self.lockLeaseSeconds)
        guard try lock.acquire() else { return nil }
        return try lock.whileHeld {
            try retry(minimumAgeSeconds: minimumAgeSeconds, limit: limit, policy: policy, connection, lock)
        }
    }

    private func retry(
        minimumAgeSeconds: Int, limit: Int, policy: PendingRetryPolicy, _ connection: MariaDBConnection,
        _ lock: ClusterLock
    ) throws -> Summary {
        let settings = SettingsCache()
        settings.refresh(connection)
        let receiptDelivery = ReceiptDelivery(
            bundleIDs: configuration.bundleIDs, sandboxPolicy: configuration.sandboxPolicy, settings: settings)
        let apple = try AppleClient(endpoints: AppleEndpoints(configuration))
        let appleThread = WorkerThreads(apple)
        appleThread.start()
        defer { appleThread.stop() }
        // The service's own checker: under local or server-api, a receipt is checked here again.
        let checker = try ReceiptChecker.standalone(configuration, apple: apple)

        let store = UnverifiedReceipts(connection: connection)
        let now = Timestamp.now()
        let cutoff = Timestamp(milliseconds: now.milliseconds - Int64(minimumAgeSeconds) * 1000)
        var summary = Summary()
        var toAsk: [[UnverifiedReceipts.Row]] = []
        for group in Self.sameBytes(try store.due(receivedBefore: cutoff, now: now, limit: limit)) {
            if let sibling = try store.completedSibling(sha256: group[0].sha256) {
                try supersede(group, by: sibling, store, &summary)
            } else {
                toAsk.append(group)
            }
        }
        var start = 0
        while start < toAsk.count {
            let batch = Array(toAsk[start..<min(start + Self.batchSize, toAsk.count)])
            start += batch.count
            try lock.renew()
            let groups = Dictionary(uniqueKeysWithValues: batch.map { ($0[0].receiptID, $0) })
            for (pending, outcome) in try askApple(about: batch.map { $0[0] }, checker, store, policy, &summary) {
                let answer = receiptDelivery.answer(pending, outcome: outcome, connection: connection)
                summary.examined += 1
                summary.statuses[answer.status.rawValue, default: 0] += 1
                guard let group = groups[pending.receiptID] else { continue }
                try settle(group, answer: answer, outcome: outcome, policy: policy, store, &summary)
            }
        }
        return summary
    }

    /// The rows by their bytes, each group in row order, groups in the order
    /// of their first row.
    private static func sameBytes(_ rows: [UnverifiedReceipts.Row]) -> [[UnverifiedReceipts.Row]] {
        var groups: [[UnverifiedReceipts.Row]] = []
        var groupOf: [String: Int] = [:]
        for row in rows {
            if let index = groupOf[row.sha256] {
                groups[index].append(row)
            } else {
                groupOf[row.sha256] = groups.count
                groups.append([row])
            }
        }
        return groups
    }

    private func supersede(
        _ rows: [UnverifiedReceipts.Row], by sibling: UInt64, _ store: UnverifiedReceipts, _ summary: inout Summary
    ) throws {
        for row in rows {
            try store.supersede(row.receiptID, by: sibling)
            summary.superseded.append((row.receiptID, sibling))
        }
    }

    /// Records the attempt on the row that was asked, and gives the rows of the
    /// same bytes its fate: superseded by it when it completed, else an attempt
    /// of their own (they would have had the same answer).
    private func settle(
        _ group: [UnverifiedReceipts.Row], answer: VerifyAnswer, outcome: AppleOutcome, policy: PendingRetryPolicy,
        _ store: UnverifiedReceipts, _ summary: inout Summary
    ) throws {
        let completed = answer.status != .retryLater
        let reply = outcome.lastAnswer.flatMap { try? AppleReply.parse(JSONParser.parse($0)) }
        let asked = group[0]
        if completed {
            try store.recordAttempt(asked.receiptID, attempts: asked.attempts + 1, next: .settled, at: .now())
            try supersede(Array(group.dropFirst()), by: asked.receiptID, store, &summary)
            return
        }
        for row in group {
            let next = policy.next(
                attempts: row.attempts + 1, completed: false, appleStatus: answer.appleStatus,
                isRetryable: reply?.isRetryable ?? false)
            try record(row, attempts: row.attempts + 1, next: next, store, &summary)
        }
    }

    private func record(
        _ row: UnverifiedReceipts.Row, attempts: Int, next: PendingRetryPolicy.Next, _ store: UnverifiedReceipts,
        _ summary: inout Summary
    ) throws {
        try store.recordAttempt(row.receiptID, attempts: attempts, next: next, at: .now())
        if case .giveUp(let reason) = next {
            summary.givenUp.append((row.receiptID, attempts, reason))
        }
    }

    /// Sends a batch to Apple at once and waits for every outcome. A row whose
    /// stored receipt is gone or cannot be read is given up: no attempt can succeed.
    private func askApple(
        about rows: [UnverifiedReceipts.Row], _ checker: ReceiptChecker, _ store: UnverifiedReceipts,
        _ policy: PendingRetryPolicy, _ summary: inout Summary
    ) throws -> [(ReceiptDelivery.Pending, AppleOutcome)] {
        let outcomes = WorkQueue<(ReceiptDelivery.Pending, AppleOutcome)>(limit: QueueLimit(jobs: rows.count))
        var asked = 0
        for row in rows {
            guard let data = row.receiptData, let receipt = try? ReceiptData.normalise(data) else {
                let reason = row.receiptData == nil
                    ? "the receipt's bytes are gone (receipt_data NULL, in its bytes_in row too)"
                    : "the stored receipt data cannot be read"
                try record(row, attempts: row.attempts + 1, next: .giveUp(reason: reason), store, &summary)
                continue
            }
            let request = VerifyRequest(
                receipt: receipt, orderID: row.orderID, transactionID: row.transactionID, userID: row.userID,
                appVersion: row.appVersion)
            let pending = ReceiptDelivery.Pending(request: request, userID: row.userID, receiptID: row.receiptID)
            let accepted = checker.check(receiptBase64: receipt.base64, deadline: .never) { outcome in
                let queued = outcomes.push((pending, outcome), bytes: 0)
                assert(queued, "room for each call of the batch")
            }
            if accepted { asked += 1 }
        }
        return (0..<asked).compactMap { _ in outcomes.pop() }
    }
}
