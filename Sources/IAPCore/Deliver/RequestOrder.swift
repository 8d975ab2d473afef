/// The order a verify request names (its `order_id`), as read from `orders`.
public struct RequestOrder: Equatable, Sendable {
    public let orderID: String
    public let userID: String
    public let productID: String
    /// `created`, `delivered` or `refunded`.
    public let status: String

    public init(orderID: String, userID: String, productID: String, status: String) {
        self.orderID = orderID
        self.userID = userID
        self.productID = productID
        self.status = status
    }

    /// Still waiting for its goods.
    public var isOpen: Bool {
        status == "created"
    }
}
