/// Builders that keep answer code short:
///
///     let answer: JSONValue = .object([
///         "status": .string("delivered"),
///         "code": .int(2),
///         "order_id": .optionalString(orderID),
///     ])
///
/// A dictionary literal makes a `JSONObject` whose members keep the order they
/// are written in (it is not a `Dictionary`), so answers read the same way the
/// contract documents them.
extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }
}

extension JSONValue {
    /// A JSON number holding the decimal text of `value`.
    public static func int(_ value: some BinaryInteger) -> JSONValue {
        .number(String(value))
    }

    /// `.string(value)`, or `.null` when `value` is nil.
    public static func optionalString(_ value: String?) -> JSONValue {
        value.map(JSONValue.string) ?? .null
    }
}
