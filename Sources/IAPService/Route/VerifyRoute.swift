import IAPCore
import MariaDB

/// POST /v1/receipts/verify, step 0: the request is checked and the order it
/// names looked up; then the receipt goes to `ReceiptRecorder` (step 1) and this
/// thread is free again. `ReceiptDelivery` finishes the work when Apple answers.
/// A receipt already verified and wholly delivered is answered at once
/// (`ReplayShortcut`, when the replay cache knows it; `ReceiptRecorder` asks
/// the database for the others), and its audit row written after (`ReplayAudit`).
struct VerifyRoute: Sendable {
    let recorder: ReceiptRecorder
    let replays: ReplayCache
    let replayAudit: ReplayAudit

    func handle(_ request: HTTPRequest, responder: Responder, worker: WorkerContext) {
        let verifyRequest: VerifyRequest
        do {
            verifyRequest = try VerifyRequest.parse(body: request.body)
        } catch {
            return responder.send(.error(error))
        }
        do {
            let userID = try user(of: verifyRequest, connection: worker.connection)
            if let replay = try ReplayShortcut(connection: worker.connection, cache: replays).answer(verifyRequest, userID: userID) {
                responder.send(.verify(replay.answer))
                return replayAudit.record(ReplayAudit.Row(
                    request: verifyRequest, userID: userID, clientAddress: request.clientAddress, receivedAt: .now(),
                    answer: replay.answer, replayOf: replay.replayOf))
            }
            recorder.record(
                ReceiptStore.NewReceipt(
                    request: verifyRequest, userID: userID, clientAddress: request.clientAddress, receivedAt: .now()),
                responder: responder)
        } catch let error as APIError where error == .orderUserMismatch {
            recordRefused(verifyRequest, clientAddress: request.clientAddress, connection: worker.connection)
            responder.send(.error(error))
        } catch let error as APIError {
            responder.send(.error(error))
        } catch {
            // The order or an earlier answer could not be read: nothing is recorded, Apple is not called.
            Log.event("verify: receipt not recorded: \(error)")
            responder.send(.verify(VerifyAnswer(status: .retryLater, orderID: verifyRequest.orderID)))
        }
    }

    /// A request refused past its input checks still leaves its audit row,
    /// with the user it asked for; a row the database refuses is logged.
    private func recordRefused(_ verifyRequest: VerifyRequest, clientAddress: String?, connection: MariaDBConnection) {
        guard let userID = verifyRequest.userID else { return }  // a mismatch names one
        let receipt = ReceiptStore.NewReceipt(
            request: verifyRequest, userID: userID, clientAddress: clientAddress, receivedAt: .now())
        do {
            try RefusedReceiptAudit(connection: connection).record(receipt)
        } catch {
            Log.event("verify: refused request not recorded: \(error)")
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
