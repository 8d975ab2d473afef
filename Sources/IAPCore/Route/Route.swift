/// The routes of the contract (docs/api.md). Everything else is a 404, and a known
/// path with another method a 405.
public enum Route: Sendable, Equatable, CaseIterable {
    case createOrder
    case verifyReceipt
    case verifyTransaction
    case verifyGooglePurchase
    case appleNotification
    case googleNotification
    case version
    case health

    /// The path and method of each route.
    public var path: String {
        switch self {
        case .createOrder: return "/v1/orders"
        case .verifyReceipt: return "/v1/receipts/verify"
        case .verifyTransaction: return "/v1/transactions/verify"
        case .verifyGooglePurchase: return "/v1/google/purchases/verify"
        case .appleNotification: return "/v1/notifications/apple"
        case .googleNotification: return "/v1/notifications/google"
        case .version: return "/v1/version"
        case .health: return "/v1/health"
        }
    }

    public var method: String {
        switch self {
        case .createOrder, .verifyReceipt, .verifyTransaction, .appleNotification: return "POST"
        case .verifyGooglePurchase, .googleNotification: return "POST"
        case .version, .health: return "GET"
        }
    }

    /// The route for a request, or the contract's 404/405 error. `path` is
    /// without its query string. HEAD is served wherever GET is.
    public static func match(method: String, path: String) -> Result<Route, APIError> {
        guard let route = allCases.first(where: { $0.path == path }) else {
            return .failure(.notFound)
        }
        let allowed = method == route.method || (method == "HEAD" && route.method == "GET")
        return allowed ? .success(route) : .failure(.methodNotAllowed)
    }
}
