import IAPCore
import MariaDB

/// POST /v1/orders: an order made before the payment, at the catalog price.
struct OrdersRoute: Sendable {
    let settings: SettingsCache

    func handle(_ request: HTTPRequest, worker: WorkerContext) -> Response {
        do {
            let order = try OrderRequest.parse(body: request.body)
            let store = OrderStore(connection: worker.connection)
            guard let product = try catalogPrice(of: order.productID, store: store) else {
                return .error(.unknownProduct)
            }
            if let price = order.price, price != product.price {
                return .error(.priceMismatch)
            }
            let orderID = OrderID.make()
            let now = Timestamp.now()
            try store.insertClientOrder(
                orderID: orderID, userID: order.userID, productID: order.productID, price: product.price,
                currency: product.currency, at: now)
            return .json(201, .object([
                "order_id": .string(orderID),
                "user_id": .string(order.userID),
                "product_id": .string(order.productID),
                "price": .string(product.price.description),
                "currency": .string(product.currency),
                "status": .string("created"),
                "created_at": .string(now.iso),
            ]))
        } catch let error as APIError {
            return .error(error)
        } catch let error as MariaDBError {
            Log.event("orders: \(error)")
            return .error(error.apiError)
        } catch {
            return .error(.internalError)
        }
    }

    /// From memory; from the database only while the catalog was never read.
    private func catalogPrice(of productID: String, store: OrderStore) throws(MariaDBError) -> SettingsCache.CatalogPrice? {
        let snapshot = settings.current
        if snapshot.isLoaded {
            return snapshot.products[productID]
        }
        return try store.activeProduct(productID).map { SettingsCache.CatalogPrice(price: $0.price, currency: $0.currency) }
    }
}
