import IAPCore
import MariaDB
internal import SignedData

/// POST /v1/transactions/verify: a StoreKit 2 signed transaction (API.md),
/// answered on the accept thread that read it, like the orders route: nothing
/// waits on Apple. The JWS is checked offline (`SignedDataVerifier`: ~70 µs
/// with its certificates known, ~1.3 ms the first time a pair is seen), the
/// order resolved (`SignedTransactionOrder`), the audit row recorded
/// (`SignedTransactionAudit`), then `SignedTransactionDelivery` admits and
/// delivers it. A refused JWS is 400 `invalid_signed_data` with only its
/// audit row; a database that cannot take the row is `retry_later`.
///
/// `{"transaction_id", "user_id"}` without a JWS needs the App Store Server
/// API, not configured in this build: 400 `server_api_not_configured`.
struct TransactionsRoute: Sendable {
    let verifier: SignedDataVerifier
    let delivery: SignedTransactionDelivery

    func handle(_ request: HTTPRequest, responder: Responder, worker: WorkerContext) {
        let verifyRequest: TransactionVerifyRequest
        do {
            verifyRequest = try TransactionVerifyRequest.parse(body: request.body)
        } catch {
            return responder.send(.error(error))
        }
        guard case .signedTransaction(let jws) = verifyRequest.subject else {
            return responder.send(.error(.serverAPINotConfigured))
        }
        responder.send(answer(jws: jws, request: verifyRequest, clientAddress: request.clientAddress, worker: worker))
    }

    private func answer(
        jws: String, request: TransactionVerifyRequest, clientAddress: String?, worker: WorkerContext
    ) -> Response {
        let receivedAt = Timestamp.now()
        let outcome: Result<(transaction: SignedTransaction, raw: JSONObject), SignedDataError>
        do {
            let (payload, json) = try verifier.verify(Array(jws.utf8))
            outcome = .success((try SignedTransaction(payload: payload, json: json), json))
        } catch {
            outcome = .failure(error)
        }
        let audit = SignedTransactionAudit(connection: worker.connection)
        func row(_ order: SignedTransactionOrder?) -> SignedTransactionAudit.Row {
            SignedTransactionAudit.Row(
                jws: jws, orderID: order?.orderID ?? request.orderID, userID: order?.userID ?? request.userID ?? "",
                appVersion: request.appVersion, clientAddress: clientAddress,
                outcome: outcome.map { ($0.transaction, $0.transaction.payload) }, receivedAt: receivedAt)
        }
        do {
            switch outcome {
            case .failure(let reason):
                Log.event("transactions/verify: invalid signed data: \(reason.rawValue)")
                _ = try audit.record(row(nil))
                return .error(.invalidSignedData)
            case .success(let verified):
                let order = try SignedTransactionOrder.resolve(
                    appAccountToken: verified.transaction.appAccountToken, request: request,
                    connection: worker.connection)
                let receiptID = try audit.record(row(order))
                return .verify(delivery.answer(
                    SignedTransactionDelivery.Input(
                        transaction: verified.transaction, raw: verified.raw, order: order,
                        appVersion: request.appVersion, receiptID: receiptID),
                    connection: worker.connection))
            }
        } catch let error as APIError {
            return .error(error)
        } catch {
            // The audit row could not be recorded: nothing is delivered.
            Log.event("transactions/verify: not recorded: \(error)")
            let environment = (try? outcome.get()).flatMap {
                SignedTransactionAdmission.Environment(rawValue: $0.transaction.environment)?.deliveryEnvironment
            }
            return .verify(VerifyAnswer(status: .retryLater, environment: environment, orderID: request.orderID))
        }
    }
}
