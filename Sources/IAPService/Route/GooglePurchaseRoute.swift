import IAPCore
import MariaDB

/// POST /v1/google/purchases/verify, on the accept thread: Google Play configured (else 503
/// `google_not_configured`), the body checked, the order it names found and of its user; then
/// `GooglePurchaseVerifier` asks Google and answers, and this thread is free again. A request
/// whose `user_id` is not its order's user is 409 `order_user_mismatch`, with its audit row.
struct GooglePurchaseRoute: Sendable {
    /// nil without `IAP_GOOGLE_PACKAGES` and `IAP_GOOGLE_SERVICE_ACCOUNT_FILE`.
    let verifier: GooglePurchaseVerifier?

    func handle(_ request: HTTPRequest, responder: Responder, worker: WorkerContext) {
        guard let verifier else { return responder.send(.error(.googleNotConfigured)) }
        let verify: GoogleVerifyRequest
        do {
            verify = try GoogleVerifyRequest.parse(body: request.body)
        } catch {
            return responder.send(.error(error))
        }
        let receivedAt = Timestamp.now()
        let userID: String
        do {
            userID = try user(of: verify, connection: worker.connection)
        } catch let error as APIError {
            if error == .orderUserMismatch, let requestUser = verify.userID {
                recordRefused(verify, userID: requestUser, request: request, receivedAt: receivedAt, worker: worker)
            }
            return responder.send(.error(error))
        } catch {
            Log.event("google/verify: order not read: \(error)")
            return responder.send(.googleVerify(VerifyAnswer(status: .retryLater, orderID: verify.orderID)))
        }
        verifier.verify(
            GooglePurchaseVerifier.Request(
                verify: verify, userID: userID, clientAddress: request.clientAddress, receivedAt: receivedAt),
            responder: responder)
    }

    /// The user the goods go to: the named order's (which must exist, and be the request's
    /// user if it names one), or the request's `user_id`.
    private func user(of verify: GoogleVerifyRequest, connection: MariaDBConnection) throws -> String {
        guard let orderID = verify.orderID else { return verify.userID ?? "" }
        guard let order = try OrderStore(connection: connection).order(orderID) else { throw APIError.unknownOrder }
        if let userID = verify.userID, userID != order.userID { throw APIError.orderUserMismatch }
        return order.userID
    }

    private func recordRefused(
        _ verify: GoogleVerifyRequest, userID: String, request: HTTPRequest, receivedAt: Timestamp, worker: WorkerContext
    ) {
        do {
            _ = try GooglePurchaseAudit(connection: worker.connection).record(GooglePurchaseAudit.Row(
                tokenSHA256: GoogleTransactionID.tokenSHA256(verify.purchaseToken), orderID: verify.orderID,
                userID: userID, appVersion: verify.appVersion, clientAddress: request.clientAddress,
                receivedAt: receivedAt))
        } catch {
            Log.event("google/verify: refused request not recorded: \(error)")
        }
    }
}
