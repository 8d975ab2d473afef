/// The body of `POST /v1/orders`:
/// `{"user_id": "u-1001", "product_id": "zydj.product.pay_6", "price": "6.00"}`.
public struct OrderRequest: Equatable, Sendable {
    /// Who the order is for; see `UserID`.
    public let userID: String
    /// The catalog product, 1 to 128 characters without control characters.
    /// Whether it exists is the service's check, not this one's.
    public let productID: String
    /// The price the client expects; when given it must equal the catalog
    /// price (the service checks that).
    public let price: Price?

    public init(userID: String, productID: String, price: Price? = nil) {
        self.userID = userID
        self.productID = productID
        self.price = price
    }

    /// The most Unicode scalars a product id may have (`VARCHAR(128)`).
    public static let maxProductIDScalars = 128

    /// Reads a request body. Errors are the contract's 400s: `invalid_json`
    /// (not a JSON object), `missing_field` (absent or null) and
    /// `invalid_field` (wrong type or length), each naming the field.
    public static func parse(body: [UInt8]) throws(APIError) -> OrderRequest {
        let fields = try RequestBody(body)
        let userID = try fields.requiredString("user_id", UserID.rule, where: UserID.isValid)
        let productID = try fields.requiredString(
            "product_id",
            "must be a string of 1 to \(maxProductIDScalars) characters without control characters",
            where: { $0.isPlainText(maxScalars: maxProductIDScalars) })
        var price: Price?
        if let value = fields["price"] {
            guard let parsed = Price(json: value) else {
                throw APIError.invalidField(
                    "price", "must be an amount like \"6.00\" (a string or a number, at most 2 decimals, not negative)")
            }
            price = parsed
        }
        return OrderRequest(userID: userID, productID: productID, price: price)
    }
}
