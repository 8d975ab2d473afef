import IAPCore
import MariaDB

/// POST /v1/receipts/verify, steps 0 and 1: the request is checked, the order it
/// names looked up, and the receipt recorded; then the receipt goes to Apple and
/// this thread is free again. `Verification` finishes the work when Apple answers.
struct VerifyRoute: Sendable {
    let apple: AppleClient
    let verification: Verification

    func handle(_ request: HTTPRequest, responder: Responder, worker: WorkerContext) {
        let verifyRequest: VerifyRequest
        do {
            verifyRequest = try VerifyRequest.parse(body: request.body)
        } catch {
            return responder.send(.error(error))
        }
        let pending: Verification.Pending
        do {
            pending = try record(verifyRequest, from: request, connection: worker.connection)
        } catch let error as APIError {
            return responder.send(.error(error))
        } catch {
            // Nothing could be recorded: Apple is not called.
            Log.event("verify: receipt not recorded: \(error)")
            return responder.send(.verify(VerifyAnswer(status: .retryLater, orderID: verifyRequest.orderID)))
        }
        apple.verify(receiptBase64: verifyRequest.receipt.base64) { outcome in
            verification.finish(pending, outcome: outcome, responder: responder)
        }
    }

    private func record(
        _ verifyRequest: VerifyRequest, from request: HTTPRequest, connection: MariaDBConnection
    ) throws -> Verification.Pending {
        var userID = verifyRequest.userID
        if let orderID = verifyRequest.orderID {
            guard let order = try OrderStore(connection: connection).order(orderID) else {
                throw APIError.unknownOrder
            }
            if let userID, userID != order.userID {
                throw APIError.orderUserMismatch
            }
            userID = order.userID
        }
        guard let userID else { throw APIError.missingField("user_id", "is required when order_id is absent") }
        let receiptID = try ReceiptStore(connection: connection).record(
            verifyRequest.receipt, orderID: verifyRequest.orderID, userID: userID,
            clientAddress: request.clientAddress, at: .now())
        return Verification.Pending(request: verifyRequest, userID: userID, receiptID: receiptID)
    }
}
