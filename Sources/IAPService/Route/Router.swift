import IAPCore

/// Sends each request to its route, or answers the contract's 404/405.
struct Router: Sendable {
    let orders: OrdersRoute
    let verify: VerifyRoute
    let transactions: TransactionsRoute
    let googlePurchases: GooglePurchaseRoute
    let notifications: NotificationsRoute
    let googleNotifications: GoogleNotificationsRoute
    let version: VersionRoute
    let health: HealthRoute

    func handle(_ request: HTTPRequest, responder: Responder, worker: WorkerContext) {
        switch Route.match(method: request.method, path: request.path) {
        case .failure(let error):
            responder.send(.error(error))
        case .success(.createOrder):
            responder.send(orders.handle(request, worker: worker))
        case .success(.verifyReceipt):
            verify.handle(request, responder: responder, worker: worker)
        case .success(.verifyTransaction):
            transactions.handle(request, responder: responder, worker: worker)
        case .success(.verifyGooglePurchase):
            googlePurchases.handle(request, responder: responder, worker: worker)
        case .success(.appleNotification):
            responder.send(notifications.handle(request, worker: worker))
        case .success(.googleNotification):
            googleNotifications.handle(request, responder: responder, worker: worker)
        case .success(.version):
            responder.send(version.handle(request))
        case .success(.health):
            responder.send(health.handle(worker: worker))
        }
    }
}
