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
public final class PendingReceipts {
    /// What one run did: how many receipts it took, and their answers by status.
    public struct Summary: CustomStringConvertible, Sendable {
        public var examined = 0
        public var statuses: [String: Int] = [:]

        public var description: String {
            let counts = statuses.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return "retried \(examined) receipt(s)" + (counts.isEmpty ? "" : ": \(counts)")
        }
    }

    /// Calls to Apple a run makes at once.
    static let batchSize = 16

    private let configuration: ServiceConfiguration

    public init(configuration: ServiceConfiguration) {
        self.configuration = configuration
    }

    /// Retries up to `limit` receipts received at least `minimumAgeSeconds` ago.
    /// Returns nil when another run holds the lock.
    public func retry(minimumAgeSeconds: Int, limit: Int) throws -> Summary? {
        MariaDBConnection.initialiseLibrary()
        let connection = Database(configuration: configuration.database).connection()
        guard try connection.execute("SELECT GET_LOCK('iap_retry_pending', 0)").first?[0] == "1" else { return nil }
        defer { _ = try? connection.execute("SELECT RELEASE_LOCK('iap_retry_pending')") }

        let settings = SettingsCache()
        settings.refresh(connection)
        let verification = Verification(
            bundleIDs: configuration.bundleIDs, sandboxPolicy: configuration.sandboxPolicy, settings: settings)
        let apple = try AppleClient(endpoints: AppleEndpoints(configuration))
        apple.start()
        defer { apple.stop() }

        let cutoff = Timestamp(milliseconds: Clock.wallMilliseconds() - Int64(minimumAgeSeconds) * 1000)
        let receipts = try ReceiptStore(connection: connection).unverified(receivedBefore: cutoff, limit: limit)
        var summary = Summary()
        var start = 0
        while start < receipts.count {
            let batch = Array(receipts[start..<min(start + Self.batchSize, receipts.count)])
            start += batch.count
            for (pending, outcome) in askApple(about: batch, apple) {
                let answer = verification.answer(pending, outcome: outcome, connection: connection)
                summary.examined += 1
                summary.statuses[answer.status.rawValue, default: 0] += 1
            }
        }
        return summary
    }

    /// Sends a batch to Apple at once and waits for every outcome.
    private func askApple(
        about batch: [ReceiptStore.Unverified], _ apple: AppleClient
    ) -> [(Verification.Pending, AppleOutcome)] {
        let outcomes = WorkQueue<(Verification.Pending, AppleOutcome)>(limit: QueueLimit(jobs: batch.count))
        var asked = 0
        for row in batch {
            guard let receipt = try? ReceiptData.normalise(row.receiptData) else { continue }
            let request = VerifyRequest(
                receipt: receipt, orderID: row.orderID, transactionID: row.transactionID, userID: row.userID,
                appVersion: row.appVersion)
            let pending = Verification.Pending(request: request, userID: row.userID, receiptID: row.receiptID)
            let accepted = apple.verify(receiptBase64: receipt.base64) { outcome in
                let queued = outcomes.push((pending, outcome), bytes: 0)
                assert(queued, "room for each call of the batch")
            }
            if accepted { asked += 1 }
        }
        return (0..<asked).compactMap { _ in outcomes.pop() }
    }
}
