import Dispatch
import IAPCore
internal import SignedData

/// The App Store Server API from a command-line process (`iapctl lookup`,
/// `iapctl transaction-info`), on an `AppleClient` of its own (as `iapctl
/// retry-pending` does): one question per instance, and a wait for the verified answer.
public final class ServerAPIQuery {
    /// Why no question can be asked at all.
    public struct NotConfigured: Error, CustomStringConvertible {
        public let description: String
    }

    /// A transaction as Apple signed it (verified).
    public struct Transaction: Sendable {
        public let transactionID: String
        public let productID: String
        /// Milliseconds since 1970 UTC.
        public let purchaseDate: Int64
        /// `Production` or `Sandbox`, from the signed payload.
        public let environment: String
        /// The JWS Apple returned, verified, for `LookupDelivery`.
        let verified: VerifiedSignedTransaction

        init(_ verified: VerifiedSignedTransaction) {
            self.verified = verified
            let signed = verified.transaction
            transactionID = signed.transactionID
            productID = signed.productID
            purchaseDate = signed.purchaseDate
            environment = signed.environment
        }
    }

    private let apple: AppleClient
    let client: AppStoreServerClient
    /// The same verifier the client's answers go through (notifications sync verifies what it fetches).
    let verifier: SignedDataVerifier

    /// Signed transactions must chain to the roots in `rootCAFile` (PEM), or to Apple Root CA - G3 when it is nil.
    /// - Throws: `NotConfigured` without `IAP_APPSTORE_*` credentials,
    ///   `ConfigurationError` for a bad key or root file, `CurlError` when libcurl cannot start.
    public init(configuration: ServiceConfiguration, rootCAFile: String?) throws {
        guard let signer = try AppStoreServerClient.signer(configuration) else {
            throw NotConfigured(
                description: "the App Store Server API is not configured: set IAP_APPSTORE_KEY_ID,"
                    + " IAP_APPSTORE_ISSUER_ID and IAP_APPSTORE_PRIVATE_KEY_FILE (the In-App Purchase key)")
        }
        let roots = try Self.trustedRoots(rootCAFile)
        apple = try AppleClient(endpoints: AppleEndpoints(configuration))
        verifier = SignedDataVerifier(roots: roots)
        client = AppStoreServerClient(configuration: configuration, signer: signer, apple: apple, verifier: verifier)
    }

    /// Look Up Order ID: the order's transactions.
    public func lookUpOrder(_ orderID: String) -> Result<[Transaction], AppStoreServerError> {
        ask { completion in
            client.lookUpOrder(orderID) { completion($0.map { $0.map(Transaction.init) }) }
        }
    }

    /// Get Transaction Info: production, then the sandbox on `4040010`.
    public func transactionInfo(_ transactionID: String) -> Result<Transaction, AppStoreServerError> {
        ask { completion in
            client.fetchTransactionInfo(transactionID) { completion($0.map(Transaction.init)) }
        }
    }

    /// Runs `body`, which asks several questions in a row (`notificationHistory`),
    /// with the client's thread started once for them all.
    func whileRunning<Answer>(_ body: () throws -> Answer) rethrows -> Answer {
        try apple.whileRunning(body)
    }

    /// Get Notification History of `environment`, one page (see `AppStoreServerClient`); only inside `whileRunning`.
    func notificationHistory(
        environment: AppleEnvironment, startMs: Int64, endMs: Int64, paginationToken: String?
    ) -> Result<(signedPayloads: [String], nextPage: String?), AppStoreServerError> {
        ask(startingClient: false) { completion in
            client.notificationHistory(
                environment: environment, startMs: startMs, endMs: endMs, paginationToken: paginationToken,
                completion: completion)
        }
    }

    /// Runs the client's thread for one question (unless `whileRunning` runs it) and waits for its answer.
    private func ask<Answer: Sendable>(
        startingClient: Bool = true,
        _ question: (@escaping @Sendable (Result<Answer, AppStoreServerError>) -> Void) -> Bool
    ) -> Result<Answer, AppStoreServerError> {
        let threads = startingClient ? WorkerThreads(apple) : nil
        threads?.start()
        defer { threads?.stop() }
        let answered = DispatchSemaphore(value: 0)
        let result = Locked<Result<Answer, AppStoreServerError>>(.failure(.unavailable))
        guard question({ outcome in
            result.withLock { $0 = outcome }
            answered.signal()
        }) else { return .failure(.unavailable) }
        answered.wait()
        return result.withLock { $0 }
    }

    private static func trustedRoots(_ file: String?) throws(ConfigurationError) -> TrustedRoots {
        guard let file else { return .apple }
        guard let pem = readSmallTextFile(file), let roots = try? TrustedRoots(pem: pem) else {
            throw ConfigurationError(
                variable: "IAP_APPLE_ROOT_CA_FILE", problem: "\(file) is not a readable PEM of certificates")
        }
        return roots
    }
}
