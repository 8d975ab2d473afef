import Glibc
import IAPCore
import Synchronization
internal import SignedData

/// Why a Server API request brought no verified transaction.
public enum AppStoreServerError: Error, Equatable, Sendable {
    /// Neither environment asked knows it (`4040010`; for an order, Apple's status 1).
    case notFound
    /// Apple unreachable, failing or rate-limiting past the budget.
    case unavailable
    /// 401: the key, key id, issuer id or bundle id is wrong (also logged).
    case unauthorized
    /// Apple's answer held a JWS that does not verify or a body not as documented.
    case invalidAnswer
}

/// The App Store Server API (Get Transaction Info, Look Up Order ID) on
/// `AppleClient`'s thread. Every signed transaction it hands over was verified
/// with `SignedDataVerifier` first, but for `fetchSignedTransactionInfo`'s JWS,
/// which its caller verifies and records. Completions run on the client's thread and
/// must not block; an id that is not letters and digits is never sent, and
/// completes `notFound` at once, on the caller's thread.
final class AppStoreServerClient: Sendable {
    typealias TransactionCompletion = @Sendable (Result<VerifiedSignedTransaction, AppStoreServerError>) -> Void
    typealias OrderCompletion = @Sendable (Result<[VerifiedSignedTransaction], AppStoreServerError>) -> Void

    let apple: AppleClient
    let api: AppStoreServerAPIConfiguration
    let caFile: String?
    /// The minute's Get Transaction Info look-ups (`IAP_APPSTORE_LOOKUPS_PER_MINUTE`), shared by the
    /// bare `transaction_id` verifies (`SignedTransactionFetches`) and the receipts confirmed under
    /// `server-api` (`ServerAPIConfirmation`), which take them before they call.
    let lookups: Locked<TransactionIDLookups>
    /// The bundle ids and the sandbox policy a verify admits (`IAP_BUNDLE_IDS`,
    /// `IAP_SANDBOX_POLICY`), so that Apple is not asked about what would be refused anyway.
    let bundleIDs: [String]
    let sandboxPolicy: SandboxPolicy
    private let policy: AppleRetryPolicy
    private let verifier: SignedDataVerifier
    private let tokens: Mutex<AppStoreTokenCache>
    private let unauthorizedLogged = Atomic<Bool>(false)

    /// The token signer of `IAP_APPSTORE_*`, nil when it holds no credentials.
    /// Read at start-up, before anything listens.
    /// - Throws: `ConfigurationError` naming `IAP_APPSTORE_PRIVATE_KEY_FILE` when
    ///   the key cannot be read or is not a P-256 private key (its contents are never shown).
    static func signer(_ configuration: ServiceConfiguration) throws(ConfigurationError) -> AppStoreTokenSigner? {
        guard let credentials = configuration.appStore.credentials else { return nil }
        let variable = "IAP_APPSTORE_PRIVATE_KEY_FILE"
        guard let pem = readSmallTextFile(credentials.privateKeyFile) else {
            throw ConfigurationError(
                variable: variable, problem: "cannot read \(credentials.privateKeyFile): \(String(cString: strerror(errno)))")
        }
        do {
            return try AppStoreTokenSigner(
                privateKeyPEM: pem, keyID: credentials.keyID, issuerID: credentials.issuerID,
                bundleID: configuration.bundleIDs[0])
        } catch {
            throw ConfigurationError(
                variable: variable,
                problem: "\(credentials.privateKeyFile) is not a P-256 private key in PEM (the In-App Purchase key, .p8)")
        }
    }

    init(
        configuration: ServiceConfiguration, signer: AppStoreTokenSigner, apple: AppleClient, verifier: SignedDataVerifier
    ) {
        self.apple = apple
        self.api = configuration.appStore
        self.caFile = configuration.caFile
        self.lookups = Locked(TransactionIDLookups(perMinute: configuration.appStore.lookupsPerMinute))
        self.bundleIDs = configuration.bundleIDs
        self.sandboxPolicy = configuration.sandboxPolicy
        self.policy = AppleRetryPolicy(budgetMs: configuration.appleTimeoutMs)
        self.verifier = verifier
        self.tokens = Mutex(AppStoreTokenCache(signer: signer))
    }

    /// Get Transaction Info: production, then the sandbox on `4040010`; with `environment`, that
    /// one alone. False when too many calls wait their turn (`completion` never runs).
    func fetchTransactionInfo(
        _ transactionID: String, environment: AppleEnvironment? = nil, deadline: Deadline = .never,
        completion: @escaping TransactionCompletion
    ) -> Bool {
        fetchSignedTransactionInfo(
            transactionID, firstEnvironment: environment ?? .production, sandboxFallback: environment == nil,
            deadline: deadline
        ) { [verifier] result in
            completion(
                result.flatMap { jws in
                    guard let verified = try? verifier.verifiedTransaction(jws) else { return .failure(.invalidAnswer) }
                    return .success(verified)
                })
        }
    }

    /// Get Transaction Info as Apple answered it: the JWS, not yet verified,
    /// for a caller that keeps it (the audit row of a `transaction_id` verify)
    /// and verifies it off this thread. `invalidAnswer`: a body without
    /// `signedTransactionInfo`. `firstEnvironment` is asked first; `sandboxFallback`
    /// false: it alone (production alone under the sandbox policy `never`). False
    /// when too many calls wait their turn.
    func fetchSignedTransactionInfo(
        _ transactionID: String, firstEnvironment: AppleEnvironment = .production, sandboxFallback: Bool = true,
        deadline: Deadline = .never, completion: @escaping @Sendable (Result<String, AppStoreServerError>) -> Void
    ) -> Bool {
        guard Self.isPathSafe(transactionID) else {
            completion(.failure(.notFound))
            return true
        }
        return request(
            "/inApps/v1/transactions/\(transactionID)", body: nil, sandboxFallback: sandboxFallback,
            firstEnvironment: firstEnvironment, deadline: deadline
        ) { result in
            completion(
                result.flatMap { body in
                    guard let jws = ServerAPIReply.signedTransactionInfo(body) else { return .failure(.invalidAnswer) }
                    return .success(jws)
                })
        }
    }

    /// Look Up Order ID (production only): the order's transactions, verified.
    func lookUpOrder(_ orderID: String, deadline: Deadline = .never, completion: @escaping OrderCompletion) -> Bool {
        guard Self.isPathSafe(orderID) else {
            completion(.failure(.notFound))
            return true
        }
        return get("/inApps/v1/lookup/\(orderID)", sandboxFallback: false, deadline: deadline) { [verifier] result in
            completion(
                result.flatMap { body in
                    guard let reply = ServerAPIReply.orderLookup(body) else { return .failure(.invalidAnswer) }
                    guard reply.known else { return .failure(.notFound) }
                    var transactions: [VerifiedSignedTransaction] = []
                    for jws in reply.signedTransactions {
                        guard let verified = try? verifier.verifiedTransaction(jws) else {
                            return .failure(.invalidAnswer)
                        }
                        transactions.append(verified)
                    }
                    return .success(transactions)
                })
        }
    }

    /// Get Notification History, one page: the notifications of `environment` signed in
    /// [`startMs`, `endMs`), as Apple sent them (each verified by the caller), and the next page's token.
    func notificationHistory(
        environment: AppleEnvironment, startMs: Int64, endMs: Int64, paginationToken: String?,
        completion: @escaping @Sendable (Result<(signedPayloads: [String], nextPage: String?), AppStoreServerError>) -> Void
    ) -> Bool {
        if let paginationToken, !Self.isQuerySafe(paginationToken) {
            completion(.failure(.invalidAnswer))
            return true
        }
        let query = paginationToken.map { "?paginationToken=\($0)" } ?? ""
        let body = JSONValue.object(["startDate": .number(String(startMs)), "endDate": .number(String(endMs))])
        return request(
            "/inApps/v1/notifications/history" + query, body: body.serialized(), sandboxFallback: false,
            firstEnvironment: environment, deadline: .never
        ) { result in
            completion(result.flatMap { body in
                guard let page = ServerAPIReply.notificationHistory(body) else { return .failure(.invalidAnswer) }
                return .success(page)
            })
        }
    }

    private func get(
        _ path: String, sandboxFallback: Bool, deadline: Deadline,
        completion: @escaping @Sendable (Result<[UInt8], AppStoreServerError>) -> Void
    ) -> Bool {
        request(path, body: nil, sandboxFallback: sandboxFallback, firstEnvironment: .production, deadline: deadline,
                completion: completion)
    }

    private func request(
        _ path: String, body: [UInt8]?, sandboxFallback: Bool, firstEnvironment: AppleEnvironment, deadline: Deadline,
        completion: @escaping @Sendable (Result<[UInt8], AppStoreServerError>) -> Void
    ) -> Bool {
        let sequence = ServerAPICallSequence(
            policy: policy, sandboxFallback: sandboxFallback, firstEnvironment: firstEnvironment)
        let exchange = ServerAPIExchange(path: path, body: body, client: self) { [self] verdict in
            switch verdict {
            case .answered(let body, _):
                completion(.success(body))
            case .notFound, .refused:
                completion(.failure(.notFound))
            case .unauthorized:
                logUnauthorizedOnce()
                completion(.failure(.unauthorized))
            case .unavailable:
                completion(.failure(.unavailable))
            }
        }
        return apple.submit(CallConversation(sequence, exchange: exchange, deadline: deadline))
    }

    /// Finish Transaction: one call to `environment` (`SingleCallSequence`), whose outcome
    /// `completion` gets (on the client's thread; it must not block). False when too many calls
    /// wait their turn (`completion` never runs). An id that is not digits is never sent: it
    /// completes `invalidTransactionID` at once, on the caller's thread.
    func finishTransaction(
        _ transactionID: String, environment: AppleEnvironment, timeoutMs: Int, deadline: Deadline,
        completion: @escaping @Sendable (FinishCallOutcome) -> Void
    ) -> Bool {
        guard AppleTransactionID.isValid(transactionID) else {
            completion(.invalidTransactionID)
            return true
        }
        let sequence = SingleCallSequence(
            environment: environment, budgetMs: timeoutMs, verdictWhenStopped: FinishCallOutcome.noAnswer(.timeout))
        // Apple documents no body for the POST: an empty JSON object is sent.
        let exchange = ServerAPIExchange<SingleCallSequence<FinishCallOutcome>>(
            path: "/inApps/v1/transactions/\(transactionID)/finish", body: Array("{}".utf8), client: self,
            reading: { result, retryAfter in
                switch result {
                case .answered(let httpStatus, let body):
                    return .answered(httpStatus: httpStatus, body: body, retryAfterUnixMs: retryAfter)
                case .transportFailure(let failure):
                    return .noAnswer(failure)
                }
            }
        ) { [self] outcome in
            if case .answered(401, _, _) = outcome { logUnauthorizedOnce() }
            completion(outcome)
        }
        return apple.submit(CallConversation(sequence, exchange: exchange, deadline: deadline))
    }

    /// The `Authorization` header line of a call starting now (a cached token while it is fresh).
    func authorizationHeader() -> String {
        "Authorization: Bearer " + tokens.withLock { $0.token(atSeconds: SystemClock.wallMilliseconds() / 1000) }
    }

    /// A 401 is the operator's to fix, and every call would repeat it: said once.
    private func logUnauthorizedOnce() {
        guard !unauthorizedLogged.exchange(true, ordering: .relaxed) else { return }
        Log.event(
            "configuration error: the App Store Server API answered 401 Unauthorized; check IAP_APPSTORE_KEY_ID,"
                + " IAP_APPSTORE_ISSUER_ID, IAP_APPSTORE_PRIVATE_KEY_FILE and the first of IAP_BUNDLE_IDS"
                + " (logged once; every Server API call fails until it is fixed)")
    }

    /// A pagination token goes into the query as it came: only characters that need no escaping.
    private static func isQuerySafe(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= 512
            && token.utf8.allSatisfy { $0 > 32 && $0 < 127 && !"&#%?+ ".utf8.contains($0) }
    }

    /// Ids Apple issues are letters and digits: anything else is never sent (no path tricks).
    private static func isPathSafe(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64
            && id.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) }
    }
}
