/// Readers for Apple's scalar values, which arrive as strings (`"quantity": "1"`)
/// or, now and then, as numbers or booleans.
enum AppleScalar {
    /// An integer written as a JSON number or a string of digits (optional sign).
    static func int64(_ value: JSONValue?) -> Int64? {
        guard let text = value?.scalarText else { return nil }
        return Int64(trimmed(text))
    }

    static func int(_ value: JSONValue?) -> Int? {
        int64(value).flatMap { Int(exactly: $0) }
    }

    /// `true`, `"true"` and `"1"` (any case, also as a number) are true;
    /// anything else, absent included, is false.
    static func flag(_ value: JSONValue?) -> Bool {
        switch value?.scalarText.map({ trimmed($0).lowercased() }) {
        case "true", "1": return true
        default: return false
        }
    }

    /// A non-empty text, or nil when the value is absent, null, empty or not a scalar.
    static func text(_ value: JSONValue?) -> String? {
        guard let text = value?.scalarText, !text.isEmpty else { return nil }
        return text
    }

    /// The text without leading and trailing spaces (no Foundation in IAPCore).
    static func trimmed(_ text: String) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }),
              let last = text.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return text[first...last]
    }
}
