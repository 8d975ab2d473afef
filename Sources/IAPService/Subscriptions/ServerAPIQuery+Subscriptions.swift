import IAPCore

extension ServerAPIQuery {
    /// Runs `body` with Apple's subscription calls (`SubscriptionExtension`), the client's thread
    /// running once for all the calls it makes (a status polled until done, chains synced one by one).
    public func withSubscriptionCalls<Answer>(
        appleTimeoutMs: Int, _ body: (SubscriptionExtension) throws -> Answer
    ) rethrows -> Answer {
        try whileRunning { try body(SubscriptionExtension(client: client, appleTimeoutMs: appleTimeoutMs)) }
    }
}
