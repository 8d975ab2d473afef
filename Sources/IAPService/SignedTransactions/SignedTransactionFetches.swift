import IAPCore
import MariaDB
internal import SignedData

/// `{"transaction_id", "user_id"}` without a JWS (docs/api.md "POST
/// /v1/transactions/verify"): the signed transaction is fetched from the App
/// Store Server API (Get Transaction Info: production, then the sandbox on
/// `4040010` unless the sandbox policy is `never`) and then goes on as if it
/// had been posted, but for whose it is: an id proves nothing, so only the
/// order its `appAccountToken` names can get it (`TransactionIDProof`; else
/// 403 `proof_required` and nothing changes).
///
/// Look-ups are bounded (`TransactionIDLookups`, shared with the receipts
/// confirmed under `server-api`): an id Apple said it does not know is
/// answered `pending` from memory for 60 s; a request whose user has no open
/// order (`OpenOrderCheck`) could not be delivered whatever Apple says, and is
/// 403 `proof_required` without a look-up; one user and one client address
/// have a share of the minute's look-ups (`LookupShares`), and at most
/// `IAP_APPSTORE_LOOKUPS_PER_MINUTE` are made a minute in all (past either:
/// `retry_later`). Whatever the answer, the request keeps its audit row.
///
/// The work runs on `SignedTransactionBatches`' threads and Apple's client
/// thread, never on an accept thread or Swift's pool: a batch thread writes the
/// audit row first (`SignedTransactionAudit.Outcome.fetching`) and hands the
/// request to `AppStoreServerClient`; Apple's answer comes back on the client's
/// thread, which only queues it for a batch thread again (`settle`): the JWS
/// verified offline, the row completed, the order resolved, and delivery as
/// for a posted JWS. The queues are the batches' and Apple's bounded ones, and
/// the request's `VerificationDeadline` bounds the calls to Apple and the
/// delivery: past it, nothing is delivered and the answer is `retry_later`.
///
/// Answers of their own: `4040010` from both environments is `pending` (202:
/// Apple can take a moment to show a new transaction); no JWS from Apple
/// (unreachable, failing, 429 past the budget, 401, a body not as documented)
/// is `retry_later`. A JWS Apple returned that does not verify is 400
/// `invalid_signed_data`, as a posted one: it came over verified TLS, so our
/// roots (`IAP_APPLE_ROOT_CA_FILE`) are the likely cause, which the log says;
/// the client must not finish, and may post the JWS StoreKit holds instead.
final class SignedTransactionFetches: Sendable {
    /// A `transaction_id` request: its audit row, then Apple is asked.
    struct Request: Sendable {
        let transactionID: String
        let request: TransactionVerifyRequest
        /// Written before Apple is asked (`.fetching`).
        let row: SignedTransactionAudit.Row
        let deadline: Deadline
        let responder: Responder
    }

    /// Apple's answer to a request whose row is `receiptID`.
    struct Answer: Sendable {
        let fetch: Request
        let receiptID: UInt64
        /// The JWS, not yet verified, or why none came.
        let result: Result<String, AppStoreServerError>
    }

    /// What an answer comes to once its row is complete.
    enum Settled {
        /// Answered as it is (pending, retry_later, 400, 409...).
        case answered(Response)
        /// Verified and resolved: delivered as a posted JWS is.
        case deliver(SignedTransactionDelivery.Input)
    }

    /// Why Apple was not asked for a recorded request.
    enum Unasked: Sendable {
        /// Apple said less than a minute ago that neither environment knows the id: `pending`.
        case knownUnknown
        /// The request's user has no open order, and the transaction is not stored for it: 403 `proof_required`.
        case noOpenOrder
        /// The minute's look-ups are spent, or the requester's share of them: `retry_later`.
        case overBudget
        /// Too many calls to Apple wait their turn, or the orders could not be read: `retry_later`.
        case queueFull
    }

    private let client: AppStoreServerClient
    private let verifier: SignedDataVerifier
    private let deadlineBudgetMs: Int
    /// `never`: the sandbox is not asked (nothing from it could be delivered).
    private let sandboxFallback: Bool
    /// The client's, shared with `ServerAPIConfirmation`.
    private var lookups: Locked<TransactionIDLookups> { client.lookups }

    init(client: AppStoreServerClient, verifier: SignedDataVerifier, appleTimeoutMs: Int) {
        self.client = client
        self.verifier = verifier
        self.deadlineBudgetMs = VerificationDeadline.budgetMs(appleTimeoutMs: appleTimeoutMs)
        self.sandboxFallback = client.sandboxPolicy != .never
    }

    /// The request of an accept thread, with its row and its deadline (from the request's arrival).
    func request(
        transactionID: String, request: TransactionVerifyRequest, clientAddress: String?, responder: Responder
    ) -> Request {
        let row = SignedTransactionAudit.Row(
            jws: "", orderID: request.orderID, userID: request.userID ?? "", appVersion: request.appVersion,
            clientAddress: clientAddress, outcome: .fetching(transactionID: transactionID), receivedAt: .now())
        return Request(
            transactionID: transactionID, request: request, row: row,
            deadline: Deadline(startNs: responder.receivedAtNs, budgetMs: deadlineBudgetMs), responder: responder)
    }

    /// Asks Apple for the transaction of a request whose row is `receiptID`,
    /// unless the id is known to be unknown, the request's user has no open
    /// order (read on `connection`), or its share of the minute's look-ups or
    /// the look-ups are spent; `answered` gets the answer on Apple's thread
    /// (and must only queue it).
    /// - Returns: nil when Apple is asked, else why not (`answered` never runs).
    func ask(
        _ fetch: Request, receiptID: UInt64, connection: MariaDBConnection,
        answered: @escaping @Sendable (Answer) -> Void
    ) -> Unasked? {
        let transactionID = fetch.transactionID
        if lookups.withLock({ $0.isKnownUnknown(transactionID, atMs: Self.nowMs()) }) { return .knownUnknown }
        do {
            guard try OpenOrderCheck(connection: connection).admits(transactionID: transactionID, request: fetch.request)
            else {
                ServiceMetrics.transactionLookupRefused(reason: .noOpenOrder)
                return .noOpenOrder
            }
        } catch {
            Log.event("transactions/verify: orders not read: \(error)")
            return .queueFull
        }
        let request = fetch.request
        let requester = LookupShares.Requester(
            user: request.userID ?? "order " + (request.orderID ?? ""), address: fetch.row.clientAddress)
        switch lookups.withLock({ $0.admit(transactionID, for: requester, atMs: Self.nowMs()) }) {
        case .knownUnknown:
            return .knownUnknown
        case .overShare:
            ServiceMetrics.transactionLookupRefused(reason: .overShare)
            return .overBudget
        case .overBudget:
            ServiceMetrics.transactionLookupRefused(reason: .overBudget)
            return .overBudget
        case .lookUp:
            break
        }
        let asked = client.fetchSignedTransactionInfo(
            transactionID, sandboxFallback: sandboxFallback, deadline: fetch.deadline
        ) { [lookups] result in
            if case .failure(.notFound) = result {
                lookups.withLock { $0.learnUnknown(transactionID, atMs: Self.nowMs()) }
            }
            answered(Answer(fetch: fetch, receiptID: receiptID, result: result))
        }
        return asked ? nil : .queueFull
    }

    /// On a batch thread: checks the JWS Apple returned, resolves the order,
    /// completes the row (before anything is delivered) and says what follows.
    func settle(_ answer: Answer, connection: MariaDBConnection) -> Settled {
        let request = answer.fetch.request
        let audit = SignedTransactionAudit(connection: connection)
        func completing(_ fetched: SignedTransactionAudit.Fetched, then settled: Settled) -> Settled {
            do {
                try audit.complete(answer.receiptID, with: fetched, at: .now())
                return settled
            } catch {
                Log.event("transactions/verify: fetched transaction not recorded: \(error)")
                return .answered(.verify(VerifyAnswer(status: .retryLater, orderID: request.orderID)))
            }
        }
        let jws: String
        switch answer.result {
        case .failure(.notFound):
            return completing(.notFound, then: .answered(.verify(VerifyAnswer(status: .pending, orderID: request.orderID))))
        case .failure(let error):
            Log.event("transactions/verify: the App Store Server API gave no transaction: \(error)")
            return completing(
                .unavailable, then: .answered(.verify(VerifyAnswer(status: .retryLater, orderID: request.orderID))))
        case .success(let signed):
            jws = signed
        }
        let verified: VerifiedSignedTransaction
        do {
            verified = try verifier.verifiedTransaction(jws)
        } catch {
            Log.event(
                "transactions/verify: the App Store Server API returned a JWS that does not verify: \(error.rawValue)"
                    + " (check IAP_APPLE_ROOT_CA_FILE)")
            return completing(
                .signed(jws: jws, outcome: .refused(error), orderID: nil, userID: nil),
                then: .answered(.error(.fetchedSignedDataInvalid)))
        }
        let transaction = verified.transaction
        let signedEnvironment = SignedTransactionAdmission.Environment(rawValue: transaction.environment)
        let retryLater = VerifyAnswer(
            status: .retryLater, environment: signedEnvironment?.deliveryEnvironment, orderID: request.orderID,
            signedEnvironment: signedEnvironment)
        let asFetched = SignedTransactionAudit.Fetched.signed(
            jws: jws, outcome: .verified(transaction), orderID: nil, userID: nil)
        guard !answer.fetch.deadline.isPast(nowNs: SystemClock.monotonicNanoseconds()) else {
            return completing(asFetched, then: .answered(.verify(retryLater)))
        }
        let order: SignedTransactionOrder
        do {
            order = try SignedTransactionOrder.proven(
                appAccountToken: transaction.appAccountToken, request: request,
                readOrder: OrderStore(connection: connection).owner)
        } catch let error as APIError {
            return completing(asFetched, then: .answered(.error(error)))
        } catch {
            Log.event("transactions/verify: order not read: \(error)")
            return .answered(.verify(retryLater))
        }
        return completing(
            .signed(jws: jws, outcome: .verified(transaction), orderID: order.orderID, userID: order.userID),
            then: .deliver(SignedTransactionDelivery.Input(
                transaction: transaction, raw: verified.raw, order: order, appVersion: request.appVersion)))
    }

    /// Milliseconds on the monotonic clock, for `lookups`.
    private static func nowMs() -> Int64 {
        Int64(SystemClock.monotonicNanoseconds() / 1_000_000)
    }

    /// Apple was not asked (`ask`): the row is closed and the client answered,
    /// `pending` for an id Apple said it does not know (the row keeps that
    /// `4040010`), 403 `proof_required` for a user with no open order, else `retry_later`.
    func unasked(_ fetch: Request, why: Unasked, receiptID: UInt64, connection: MariaDBConnection) -> Response {
        let knownUnknown = why == .knownUnknown
        do {
            try SignedTransactionAudit(connection: connection).complete(
                receiptID, with: knownUnknown ? .notFound : .unavailable, at: .now())
        } catch {
            Log.event("transactions/verify: fetch row not closed: \(error)")
        }
        switch why {
        case .knownUnknown: return .verify(VerifyAnswer(status: .pending, orderID: fetch.request.orderID))
        case .noOpenOrder: return .error(.proofRequired)
        case .overBudget, .queueFull: return .verify(VerifyAnswer(status: .retryLater, orderID: fetch.request.orderID))
        }
    }
}

extension APIError {
    /// The JWS Apple's Server API returned for a `transaction_id` does not verify.
    static let fetchedSignedDataInvalid = APIError(
        httpStatus: 400, code: "invalid_signed_data",
        message: "the signed transaction the App Store Server API returned does not verify; do not finish the transaction")
}
