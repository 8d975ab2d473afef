/// The body length a request declares in the FastCGI parameter `CONTENT_LENGTH`,
/// checked before any of the body is read. nginx sends a valid one; anything
/// else reached the socket some other way.
public enum ContentLength {
    /// The declared length: 0 when the parameter is absent or empty.
    /// - Throws: `invalid_field` unless the value is decimal digits only (no sign,
    ///   no spaces); `body_too_large` past `limit`, however many digits.
    public static func declared(_ text: String?, limit: Int) throws(APIError) -> Int {
        guard let text, !text.isEmpty else { return 0 }
        guard text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw .invalidField("CONTENT_LENGTH", "must be empty or a non-negative whole number of bytes")
        }
        guard let length = Int(text), length <= limit else { throw .bodyTooLarge }
        return length
    }
}
