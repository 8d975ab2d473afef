import IAPCore
import MariaDB
internal import SignedData

/// POST /v1/transactions/verify: a StoreKit 2 signed transaction (docs/api.md).
/// On the accept thread that read it: the request is checked, the JWS
/// verified offline (`SignedDataVerifier`: ~70 µs with its certificates
/// known, ~1.3 ms the first time a pair is seen) and the order resolved
/// (`SignedTransactionOrder`). Then `SignedTransactionBatches` records the
/// audit row and delivers, and this thread is free again. A refused JWS is 400
/// `invalid_signed_data`, and a request that contradicts the order the
/// transaction names 409 `order_user_mismatch`, each with only its audit row;
/// a database that cannot take the row is `retry_later`.
///
/// `{"transaction_id", "user_id"}` without a JWS goes to
/// `SignedTransactionFetches` through the same threads (the audit row, then
/// the App Store Server API, then as if the JWS had been posted, but for the
/// proof an id lacks: 403 `proof_required` unless the transaction's
/// `appAccountToken` names the user's order); without the Server API
/// configured it is 400 `server_api_not_configured`.
struct TransactionsRoute: Sendable {
    let verifier: SignedDataVerifier
    let batches: SignedTransactionBatches
    /// nil without `IAP_APPSTORE_*` credentials.
    let fetches: SignedTransactionFetches?

    func handle(_ request: HTTPRequest, responder: Responder, worker: WorkerContext) {
        let verifyRequest: TransactionVerifyRequest
        do {
            verifyRequest = try TransactionVerifyRequest.parse(body: request.body)
        } catch {
            return responder.send(.error(error))
        }
        let jws: String
        switch verifyRequest.subject {
        case .signedTransaction(let posted):
            jws = posted
        case .transactionID(let transactionID):
            guard let fetches else { return responder.send(.error(.serverAPINotConfigured)) }
            return batches.submit(.fetch(fetches.request(
                transactionID: transactionID, request: verifyRequest, clientAddress: request.clientAddress,
                responder: responder)))
        }
        let receivedAt = Timestamp.now()
        let verified: VerifiedSignedTransaction
        do {
            verified = try verifier.verifiedTransaction(jws)
        } catch {
            Log.event("transactions/verify: invalid signed data: \(error.rawValue)")
            ServiceMetrics.jwsVerificationFailed(reason: error.rawValue)
            let row = SignedTransactionAudit.Row(
                jws: jws, orderID: verifyRequest.orderID, userID: verifyRequest.userID ?? "",
                appVersion: verifyRequest.appVersion, clientAddress: request.clientAddress, outcome: .refused(error),
                receivedAt: receivedAt)
            return batches.submit(.posted(SignedTransactionBatches.Job(
                row: row, next: .refuse(.invalidSignedData), responder: responder)))
        }
        let order: SignedTransactionOrder
        do {
            order = try SignedTransactionOrder.resolve(
                appAccountToken: verified.transaction.appAccountToken, request: verifyRequest,
                readOrder: OrderStore(connection: worker.connection).owner)
        } catch let error as APIError where error == .orderUserMismatch {
            // Past the input checks: on record, as the request named it, before the 409.
            let row = SignedTransactionAudit.Row(
                jws: jws, orderID: verifyRequest.orderID, userID: verifyRequest.userID ?? "",
                appVersion: verifyRequest.appVersion, clientAddress: request.clientAddress,
                outcome: .verified(verified.transaction), receivedAt: receivedAt)
            return batches.submit(.posted(SignedTransactionBatches.Job(row: row, next: .refuse(error), responder: responder)))
        } catch let error as APIError {
            return responder.send(.error(error))
        } catch {
            // The orders could not be read: nothing is recorded.
            Log.event("transactions/verify: order not read: \(error)")
            let environment = SignedTransactionAdmission.Environment(rawValue: verified.transaction.environment)
            return responder.send(.verify(VerifyAnswer(
                status: .retryLater, environment: environment?.deliveryEnvironment, orderID: verifyRequest.orderID,
                signedEnvironment: environment)))
        }
        let row = SignedTransactionAudit.Row(
            jws: jws, orderID: order.orderID, userID: order.userID, appVersion: verifyRequest.appVersion,
            clientAddress: request.clientAddress, outcome: .verified(verified.transaction),
            receivedAt: receivedAt)
        let input = SignedTransactionDelivery.Input(
            transaction: verified.transaction, raw: verified.raw, order: order, appVersion: verifyRequest.appVersion)
        batches.submit(.posted(SignedTransactionBatches.Job(row: row, next: .deliver(input), responder: responder)))
    }
}
