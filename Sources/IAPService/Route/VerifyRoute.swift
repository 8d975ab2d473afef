import IAPCore
import MariaDB

/// POST /v1/receipts/verify, steps 0 and 1: the request is checked, the order it
/// names looked up, and the receipt recorded; then the receipt goes to Apple and
/// this thread is free again. `Verification` finishes the work when Apple answers.
/// A receipt already verified and wholly delivered is answered at once
/// (`ReplayShortcut`).
struct VerifyRoute: Sendable {
    let apple: AppleClient
    let verification: Verification
    let replays: ReplayCache

    func handle(_ request: HTTPRequest, responder: Responder, worker: WorkerContext) {
        let verifyRequest: VerifyRequest
        do {
            verifyRequest = try VerifyRequest.parse(body: request.body)
        } catch {
            return responder.send(.error(error))
        }
        let pending: Verification.Pending
        do {
            let userID = try user(of: verifyRequest, connection: worker.connection)
            if let replay = try ReplayShortcut(connection: worker.connection, cache: replays).answer(verifyRequest, userID: userID) {
                return responder.send(.verify(replay))
            }
            let receiptID = try ReceiptStore(connection: worker.connection).record(
                verifyRequest, userID: userID, clientAddress: request.clientAddress, at: .now())
            pending = Verification.Pending(request: verifyRequest, userID: userID, receiptID: receiptID)
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

    /// The user the goods go to: the named order's (which must exist, and be
    /// the request's user if it names one), or the request's `user_id`.
    private func user(of verifyRequest: VerifyRequest, connection: MariaDBConnection) throws -> String {
        guard let orderID = verifyRequest.orderID else {
            guard let userID = verifyRequest.userID else {
                throw APIError.missingField("user_id", "is required when order_id is absent")
            }
            return userID
        }
        guard let order = try OrderStore(connection: connection).order(orderID) else {
            throw APIError.unknownOrder
        }
        if let userID = verifyRequest.userID, userID != order.userID {
            throw APIError.orderUserMismatch
        }
        return order.userID
    }
}
