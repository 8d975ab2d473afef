import IAPCore
import MariaDB
internal import SignedData

/// `iapctl notifications sync --since DATE` (docs/iapctl.md): Get Notification History
/// of production, then of the sandbox, page by page, and every notification
/// not yet stored verified and applied exactly as if Apple had POSTed it
/// (`NotificationApplier`, source `sync`). Ones already stored change nothing,
/// so running it again, or while Apple's retries arrive, is harmless. It covers
/// an outage longer than Apple's retries (72 hours).
public struct NotificationSync {
    /// What a run found, for the operator.
    public struct Summary: Sendable {
        public var fetched = 0
        public var applied = 0
        public var alreadyStored = 0
        /// Did not verify, or were for another bundle: logged and left out.
        public var refused = 0
    }

    /// Apple did not answer a page: the run stops there (what it applied stays applied).
    public struct Failure: Error {
        public let environment: String
        public let error: AppStoreServerError
    }

    private let context: AppleSyncContext

    public init(_ context: AppleSyncContext) {
        self.context = context
    }

    /// Every notification signed from `sinceMs` until `untilMs`.
    /// - Throws: `Failure` when Apple did not answer; the database's error.
    public func run(sinceMs: Int64, untilMs: Int64, log: (String) -> Void) throws -> Summary {
        let settings = SettingsCache()
        settings.refresh(context.connection)
        let snapshot = settings.current
        let applier = NotificationApplier(
            connection: context.connection, sandboxPolicy: context.configuration.sandboxPolicy,
            settingsAreKnown: snapshot.isLoaded, sandboxUsers: snapshot.sandboxUsers)
        var summary = Summary()
        try context.query.whileRunning {
            for environment in [AppleEnvironment.production, .sandbox] {
                var page: String?
                repeat {
                    switch context.query.notificationHistory(
                        environment: environment, startMs: sinceMs, endMs: untilMs, paginationToken: page)
                    {
                    case .failure(let error):
                        throw Failure(environment: environment.rawValue, error: error)
                    case .success(let found):
                        for signedPayload in found.signedPayloads {
                            summary.fetched += 1
                            try apply(signedPayload, applier: applier, summary: &summary, log: log)
                        }
                        page = found.nextPage
                    }
                } while page != nil
            }
        }
        return summary
    }

    private func apply(
        _ signedPayload: String, applier: NotificationApplier, summary: inout Summary, log: (String) -> Void
    ) throws {
        let verified: VerifiedNotification
        do {
            verified = try VerifiedNotification.verify(
                signedPayload, verifier: context.query.verifier, bundleIDs: context.configuration.bundleIDs)
        } catch {
            summary.refused += 1
            log("refused: \(error.reason)")
            return
        }
        let notification = verified.notification
        switch try applier.apply(verified, source: .sync) {
        case .duplicate:
            summary.alreadyStored += 1
        case .stored(let effect):
            summary.applied += 1
            log("\(notification.notificationType) \(notification.notificationUUID): \(effect.rawValue)")
        }
    }
}
